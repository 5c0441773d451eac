package synth

import (
	"slices"
	"strconv"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// A Counter counts the tokens of a text; estimate.Tokenizer is one.
type Counter interface{ Count(text string) int }

// Stats summarises generated sessions: what the profile tests pin and what
// "ctxsim gen" prints.
type Stats struct {
	Sessions    int `json:"sessions"`
	Turns       int `json:"turns"` // user events
	Calls       int `json:"calls"` // assistant events
	ToolResults int `json:"tool_results"`
	// FloorTokens is the floor of every session, summed; Tokens is the
	// transcript (all event blocks), tokenized as Block.TokenText.
	FloorTokens  int `json:"floor_tokens"`
	Tokens       int `json:"tokens"`
	OutputTokens int `json:"output_tokens"` // sum of Meta["output_tokens"]
	// Duration is the sum of first-to-last-event spans.
	Duration time.Duration `json:"duration_ns"`
	// GapP50 and GapP90 are quantiles of the human gaps: from the last event
	// before a user message to that message.
	GapP50 time.Duration `json:"gap_p50_ns"`
	GapP90 time.Duration `json:"gap_p90_ns"`
}

// Measure computes the statistics of sessions with tokenizer c; a nil c
// leaves the token fields 0.
func Measure(sessions []*traces.Session, c Counter) Stats {
	var st Stats
	var gaps []time.Duration
	count := func(b *traces.Block) int {
		if c == nil {
			return 0
		}
		if b.Opaque() {
			return b.Tokens
		}
		return c.Count(b.TokenText())
	}
	for _, s := range sessions {
		st.Sessions++
		for i := range s.Floor {
			st.FloorTokens += count(&s.Floor[i])
		}
		for i := range s.Events {
			e := &s.Events[i]
			switch e.Kind {
			case traces.User:
				st.Turns++
				if i > 0 {
					gaps = append(gaps, e.Time.Sub(s.Events[i-1].Time))
				}
			case traces.Assistant:
				st.Calls++
				n, _ := strconv.Atoi(e.Meta["output_tokens"])
				st.OutputTokens += n
			case traces.ToolResult:
				st.ToolResults++
			}
			for j := range e.Blocks {
				st.Tokens += count(&e.Blocks[j])
			}
		}
		if len(s.Events) > 0 {
			st.Duration += s.Events[len(s.Events)-1].Time.Sub(s.Events[0].Time)
		}
	}
	slices.Sort(gaps)
	st.GapP50, st.GapP90 = quantile(gaps, 0.5), quantile(gaps, 0.9)
	return st
}

// quantile is the nearest-rank quantile of sorted xs (0 when empty).
func quantile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

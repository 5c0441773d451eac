package compact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

func msg(role prompt.Role, ev int, blocks ...traces.Block) prompt.Message {
	return prompt.NewMessage(role, blocks, ev, prompt.Plain)
}

func txt(s string) traces.Block { return traces.Block{Kind: traces.Text, Text: s} }

type okSummarizer struct{ calls int }

func (s *okSummarizer) Summarize(_ context.Context, now time.Time, in SummaryInput) (SummaryOutput, error) {
	s.calls++
	return SummaryOutput{Text: "the summary", Usage: traces.Usage{Input: int64(in.PromptTokens()), Output: 3}}, nil
}

// conversation is head-less alternating turns of big text, ending with a
// user message.
func conversation(n int) []prompt.Message {
	var out []prompt.Message
	for i := 0; i < n; i++ {
		role := prompt.RoleUser
		if i%2 == 1 {
			role = prompt.RoleAssistant
		}
		out = append(out, msg(role, i, txt(strings.Repeat("w", 4000)+string(rune('a'+i%26)))))
	}
	return out
}

func newManager(t *testing.T, sum Summarizer, mutate func(*Config)) *Manager {
	t.Helper()
	c := DefaultConfig()
	c.Estimate = EstimateRough
	if mutate != nil {
		mutate(&c)
	}
	m, err := New(c, Model{Name: "m", Window: 128_000}, sum, nil)
	require.NoError(t, err)
	return m
}

func TestSummaryRoleAndMerge(t *testing.T) {
	// After a first compaction the head is empty: the summary must be the
	// first message, so it is a user message, and the tail opens with a
	// user message too: the two are merged, summary first.
	// Each message is 1011 budget tokens; the lean tail (10K, soft ceiling
	// 15K) keeps the last 14: the tail opens on an assistant message with
	// 41 messages (a standalone summary) and on a user message with 42 (a
	// merge).
	for _, tt := range []struct{ n, blocks int }{{41, 1}, {42, 2}} {
		m := newManager(t, &okSummarizer{}, nil)
		m.dur.Compactions = 1
		v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "sys"}}, Messages: conversation(tt.n)}
		nv, ps := m.compress(context.Background(), time.Unix(0, 0), v, KindBatch, "test")
		require.Equal(t, OutcomeCompacted, ps[0].Outcome)
		first := nv.Messages[0]
		if first.Role != prompt.RoleUser || first.Tag != prompt.BatchSummary || len(first.Blocks) != tt.blocks {
			t.Errorf("%d messages: first message = %v %v with %d blocks, want a user BatchSummary with %d", tt.n, first.Role, first.Tag, len(first.Blocks), tt.blocks)
		}
		if !strings.HasPrefix(first.Blocks[0].Text, SummaryPrefix) || !strings.HasSuffix(first.Blocks[0].Text, EndMarker) {
			t.Errorf("%d messages: summary block lacks the prefix or end marker", tt.n)
		}
		if got := len(nv.Messages); got != 14+2-tt.blocks {
			t.Errorf("%d messages: %d after compaction, want %d", tt.n, got, 14+2-tt.blocks)
		}
		for i := 1; i < len(nv.Messages); i++ {
			if wireUser(&nv.Messages[i]) == wireUser(&nv.Messages[i-1]) {
				t.Errorf("%d messages: messages %d and %d have the same wire role", tt.n, i-1, i)
			}
		}
	}
	v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "sys"}}, Messages: conversation(41)}
	// With a protected head ending on an assistant message the summary is a
	// user message of its own; with a head ending on a user message it is
	// an assistant message.
	for _, tt := range []struct {
		head int
		want prompt.Role
	}{{2, prompt.RoleUser}, {3, prompt.RoleAssistant}} {
		m := newManager(t, &okSummarizer{}, func(c *Config) { c.ProtectFirstN = tt.head })
		nv, _ := m.compress(context.Background(), time.Unix(0, 0), v, KindBatch, "test")
		s := nv.Messages[tt.head]
		if s.Tag != prompt.BatchSummary || s.Role != tt.want {
			t.Errorf("head %d: summary is %v %v, want %v BatchSummary", tt.head, s.Role, s.Tag, tt.want)
		}
	}
}

func TestSystemNoteOnce(t *testing.T) {
	m := newManager(t, &okSummarizer{}, nil)
	v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "sys"}}, Messages: conversation(41)}
	nv, _ := m.compress(context.Background(), time.Unix(0, 0), v, KindBatch, "test")
	if len(nv.System) != 2 || nv.System[1].Text != SystemNote || len(v.System) != 1 {
		t.Fatalf("after one compaction: %d system blocks (input %d), want 2 (input 1)", len(nv.System), len(v.System))
	}
	nv.Messages = append(nv.Messages, conversation(41)[1:]...)
	nv2, ps := m.compress(context.Background(), time.Unix(0, 0), nv, KindBatch, "test")
	if len(ps) != 1 || ps[0].Outcome != OutcomeCompacted {
		t.Fatalf("second compaction: passes %+v, want one compacted", ps)
	}
	if len(nv2.System) != 2 {
		t.Errorf("after two compactions: %d system blocks, want 2", len(nv2.System))
	}
}

func TestFallbackBounded(t *testing.T) {
	var msgs []prompt.Message
	for i := 0; i < 500; i++ {
		msgs = append(msgs, msg(prompt.RoleUser, i, txt(strings.Repeat("ask ", 100))))
	}
	f := DigestSummary(msgs)
	if len(f) > FallbackMaxChars || len(f) < FallbackMaxChars-300 {
		t.Errorf("len(Fallback) = %d, want ≤ %d and nearly full", len(f), FallbackMaxChars)
	}
}

func TestSerializeCaps(t *testing.T) {
	big := strings.Repeat("x", 10_000)
	s := SummaryTranscript([]prompt.Message{msg(prompt.RoleUser, 0, txt(big))})
	if n := len(s); n > msgHeadChars+msgTailChars+100 {
		t.Errorf("one 10000-char message serializes to %d chars, want ≤ %d", n, msgHeadChars+msgTailChars+100)
	}
	var many []prompt.Message
	for i := 0; i < 100; i++ {
		many = append(many, msg(prompt.RoleUser, i, txt(strings.Repeat("y", 5000))))
	}
	if n := len(SummaryTranscript(many)); n > SummaryInputChars+100 {
		t.Errorf("500K chars serialize to %d, want ≤ %d", n, SummaryInputChars+100)
	}
}

func TestTruncateArgs(t *testing.T) {
	in := `{"path":"a.go","content":"` + strings.Repeat("z", 900) + `","n":3}`
	out, ok := truncateArgs(in)
	if !ok || !json.Valid([]byte(out)) || len(out) >= len(in) {
		t.Fatalf("truncateArgs: ok=%v valid=%v len %d → %d", ok, json.Valid([]byte(out)), len(in), len(out))
	}
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	if c := v["content"].(string); len(c) != argsValueChars+len("…[truncated]") || v["path"] != "a.go" || v["n"] != 3.0 {
		t.Errorf("truncated args = %v", v)
	}
	if _, ok := truncateArgs("not json " + strings.Repeat("q", 600)); ok {
		t.Error("non-JSON arguments were rewritten")
	}
}

func TestPruneGateSamePointer(t *testing.T) {
	m := newManager(t, nil, func(c *Config) { c.ProactivePruneTokens = 1000 })
	// 40 calls and results; short results reclaim nothing, 9000-char ones
	// outside the 20-message tail become one line each.
	build := func(size int) *prompt.View {
		v := &prompt.View{}
		for i := 0; i < 40; i++ {
			id := string(rune('A' + i))
			v.Messages = append(v.Messages,
				msg(prompt.RoleAssistant, 2*i, traces.Block{Kind: traces.ToolUse, ID: id, Name: "read_file", Input: `{"path":"f"}`}),
				msg(prompt.RoleTool, 2*i+1, traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat(id, size)}))
		}
		return v
	}
	small := build(100)
	nv, p := m.prune(small, KindPrune, "test", 4096)
	if nv != small || p.Outcome != OutcomeBelowReclaim {
		t.Errorf("small results: outcome %s, same pointer %v; want below_min_reclaim and the input", p.Outcome, nv == small)
	}
	big := build(9000)
	nv, p = m.prune(big, KindPrune, "test", 4096)
	if nv == big || p.Outcome != OutcomePruned {
		t.Fatalf("big results: outcome %s", p.Outcome)
	}
	// 30 results outside the tail of 20 messages, 9000 chars → one line each.
	edited := 0
	for i := range nv.Messages {
		if nv.Messages[i].Tag == prompt.Edited {
			edited++
		}
	}
	// 30 results lie outside the tail; the one in the 3-message head stays.
	if edited != 29 {
		t.Errorf("pruned %d results, want 29", edited)
	}
	if reclaim := budgetSum(big.Messages) - budgetSum(nv.Messages); reclaim < 29*2200 {
		t.Errorf("reclaimed %d tokens, want ≥ %d", reclaim, 29*2200)
	}
	if got := estimate.Rough(big.Messages[1].Blocks[0].Text); got != 2250 {
		t.Errorf("input changed: first result is %d tokens, want 2250", got)
	}
}

func budgetSum(msgs []prompt.Message) int {
	n := 0
	for i := range msgs {
		n += estimate.MsgBudget(&msgs[i])
	}
	return n
}

// cancelSummarizer cancels its context mid-call, as a user's Ctrl-C during
// the auxiliary model's request would, and returns the context's error.
type cancelSummarizer struct{ cancel context.CancelFunc }

func (s *cancelSummarizer) Summarize(ctx context.Context, _ time.Time, _ SummaryInput) (SummaryOutput, error) {
	s.cancel()
	return SummaryOutput{}, ctx.Err()
}

// A summary call cancelled by its context is not a failed summary: no
// pass, no fallback, no strike against the breaker, the view unchanged;
// BeforeCall returns the context's error.
func TestCompressCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := newManager(t, &cancelSummarizer{cancel: cancel}, nil)
	v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "sys"}}, Messages: conversation(121)} // 121K tokens, over the 96K threshold
	before := m.Durable()
	nv, ps, err := m.BeforeCall(ctx, time.Unix(0, 0), v)
	require.ErrorIs(t, err, context.Canceled)
	require.Same(t, v, nv, "the view must be unchanged")
	for _, p := range ps {
		if p.Kind == KindBatch && p.Outcome != "" {
			t.Errorf("cancelled compaction left a pass: %+v", p)
		}
	}
	require.Equal(t, before, m.Durable(), "a cancelled summary must not count against the breaker")
}

type recordingSummarizer struct{ ins []SummaryInput }

func (s *recordingSummarizer) Summarize(_ context.Context, _ time.Time, in SummaryInput) (SummaryOutput, error) {
	s.ins = append(s.ins, in)
	return SummaryOutput{Text: "the summary", Usage: traces.Usage{Input: int64(in.PromptTokens()), Output: 3}}, nil
}

func TestMergedSummaryKeepsItsMessage(t *testing.T) {
	// The first compaction merges its summary into the first tail message
	// (a user message, see TestSummaryRoleAndMerge). When that message
	// falls in the next compaction's window, its own text is summarized
	// with the rest; before, only the summary's text was kept (as the
	// previous summary) and the message was lost.
	sum := &recordingSummarizer{}
	m := newManager(t, sum, nil)
	m.dur.Compactions = 1
	v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "sys"}}, Messages: conversation(42)}
	nv, ps := m.compress(context.Background(), time.Unix(0, 0), v, KindBatch, "test")
	require.Equal(t, OutcomeCompacted, ps[0].Outcome)
	carrier := nv.Messages[0]
	require.Equal(t, prompt.BatchSummary, carrier.Tag)
	require.Len(t, carrier.Blocks, 2)
	own := carrier.Blocks[1].Text

	more := conversation(42)
	for i := range more {
		more[i] = msg(more[i].Role, 100+i, txt(strings.Repeat("x", 4000)+string(rune('a'+i%26))))
	}
	v2 := &prompt.View{System: nv.System, Messages: append(append([]prompt.Message(nil), nv.Messages...), more...)}
	_, ps = m.compress(context.Background(), time.Unix(100, 0), v2, KindBatch, "test")
	require.Equal(t, OutcomeCompacted, ps[0].Outcome)
	require.Len(t, sum.ins, 2)
	in := sum.ins[1]
	require.Contains(t, in.Previous, "the summary", "the merged summary is the previous summary")
	require.NotContains(t, in.Transcript, SummaryPrefix, "the summary is not summarized again")
	require.Contains(t, in.Transcript, own[len(own)-200:], "the carrier's own message is summarized")
}

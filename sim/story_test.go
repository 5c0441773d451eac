package sim

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ctxsim/ctxsim/internal/storyargs"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// TestStories runs the engine stories under testdata/stories: sessions
// written event by event, replayed against the fake Anthropic provider, the
// records printed one a line. Rewrite the expected output with
// go test ./sim -run TestStories -update, and review the diff.
//
//	session id=ID [model=M] [floor=N] [shared=N] [parent=ID] [tenant=K] [source=S]
//	                          start a session; floor (an opaque system block of
//	                          N tokens) else none (inferred from the first
//	                          call's usage); shared=N splits off a first floor
//	                          block of N tokens named like an inferred one
//	user at=D [size=N] [summary]        a user message at t0+D (a recorded
//	                                    continuation summary with summary)
//	user at=D effort=LEVEL              the logged command "/effort LEVEL"
//	assistant at=D [size=N] [calls=K] [usage=(in,w5m,w1h,read,out)]
//	tool at=D [size=N]                  results of the last assistant's calls
//	restart at=D | floor-change at=D | model at=D model=M [account=A]
//	replay [policy=NAME] [variant=TTL] [set=(k=v,...)] [prewarm] [calibrate]
//	                          replay every session as one tenant, in the order
//	                          written; policy is a preset or "recorded"
//	                          (default); variant is NewRecordedVariant's TTL
var update = flag.Bool("update", false, "rewrite the stories' expected output")

func TestStories(t *testing.T) {
	storyargs.Walk(t, "testdata/stories", *update, func() func(*testing.T, *datadriven.TestData) string {
		return (&story{}).run
	})
}

// storyTokens counts an opaque block by its size and a text block by its
// length: the stories say their sizes in tokens.
type storyTokens struct{}

func (storyTokens) Name() string          { return "story" }
func (storyTokens) Count(text string) int { return len(text) }

type story struct {
	sessions []*traces.Session
	cur      *traces.Session
	blocks   int
}

var storyT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// The story arguments parse as policies/compact's scenarios' do
// (internal/storyargs).
var storyArgs = storyargs.Lists

func (st *story) int(t *testing.T, a map[string][]string, k string, def int) int {
	return storyargs.Int(t, a, k, def)
}

func (st *story) at(t *testing.T, a map[string][]string) time.Time {
	return storyT0.Add(storyargs.Duration(t, a, "at"))
}

// block is a fresh opaque block of n tokens: distinct blocks never share a
// cache entry by accident.
func (st *story) block(kind traces.BlockKind, n int) traces.Block {
	st.blocks++
	return traces.Block{Kind: kind, Name: fmt.Sprintf("b%d", st.blocks), Tokens: n}
}

func (st *story) event(t *testing.T, d *datadriven.TestData, e traces.Event) string {
	if st.cur == nil {
		t.Fatalf("%s before any session", d.Cmd)
	}
	st.cur.Events = append(st.cur.Events, e)
	return ""
}

func (st *story) run(t *testing.T, d *datadriven.TestData) string {
	a := storyArgs(d)
	switch d.Cmd {
	case "session":
		s := &traces.Session{ID: a["id"][0], Model: "claude-opus-4-6", Source: traces.SourceCLI}
		if m, ok := a["model"]; ok {
			s.Model = m[0]
		}
		if p, ok := a["parent"]; ok {
			s.Parent = p[0]
		}
		if k, ok := a["tenant"]; ok {
			s.Tenant = k[0]
		}
		if src, ok := a["source"]; ok {
			s.Source = traces.Source(src[0])
		}
		if v, ok := a["version"]; ok {
			s.Harness = "claude-code " + v[0]
			s.Format = claudecodeFormat
		}
		if n := st.int(t, a, "floor", 0); n > 0 {
			if sh := st.int(t, a, "shared", 0); sh > 0 {
				s.Floor = []traces.Block{{Kind: traces.System, Name: fmt.Sprintf("shared-floor/%d", sh), Tokens: sh},
					{Kind: traces.System, Name: "floor/" + s.ID, Tokens: n - sh}}
			} else {
				s.Floor = []traces.Block{{Kind: traces.System, Name: "floor/" + s.ID, Tokens: n}}
			}
		}
		st.sessions = append(st.sessions, s)
		st.cur = s
		return ""
	case "user":
		_, summary := a["summary"]
		if _, ok := a["interrupted"]; ok {
			// Claude Code's notice right after a prompt it stopped
			// (traces.MetaInterrupted).
			return st.event(t, d, traces.Event{Time: st.at(t, a), Kind: traces.User, Meta: map[string]string{traces.MetaInterrupted: "prompt"},
				Blocks: []traces.Block{{Kind: traces.Text, Text: "[Request interrupted by user]"}}})
		}
		if lvl, ok := a["effort"]; ok {
			text := "<command-name>/effort</command-name> <command-message>effort</command-message> <command-args>" + lvl[0] + "</command-args>"
			return st.event(t, d, traces.Event{Time: st.at(t, a), Kind: traces.User, Blocks: []traces.Block{{Kind: traces.Text, Text: text}}})
		}
		return st.event(t, d, traces.Event{Time: st.at(t, a), Kind: traces.User, Summary: summary,
			Blocks: []traces.Block{st.block(traces.Text, st.int(t, a, "size", 50))}})
	case "assistant":
		e := traces.Event{Time: st.at(t, a), Kind: traces.Assistant, Blocks: []traces.Block{st.block(traces.Text, st.int(t, a, "size", 30))}}
		for i := range st.int(t, a, "calls", 0) {
			e.Blocks = append(e.Blocks, traces.Block{Kind: traces.ToolUse, ID: fmt.Sprintf("c%d-%d", st.blocks, i), Name: "Bash", Input: "{}"})
		}
		if u, ok := a["usage"]; ok {
			if len(u) != 5 {
				t.Fatalf("usage=%v: want (in,w5m,w1h,read,out)", u)
			}
			var n [5]int64
			for i, v := range u {
				x, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("usage=%v: %v", u, err)
				}
				n[i] = x
			}
			e.Usage = &traces.Usage{Input: n[0], CacheWrite5m: n[1], CacheWrite1h: n[2], CacheRead: n[3], Output: n[4]}
		}
		return st.event(t, d, e)
	case "tool":
		var blocks []traces.Block
		for i := len(st.cur.Events) - 1; i >= 0; i-- {
			if ev := &st.cur.Events[i]; ev.Kind == traces.Assistant {
				for _, b := range ev.Blocks {
					if b.Kind == traces.ToolUse {
						r := st.block(traces.ToolResultBlock, st.int(t, a, "size", 200))
						r.ID = b.ID
						blocks = append(blocks, r)
					}
				}
				break
			}
		}
		return st.event(t, d, traces.Event{Time: st.at(t, a), Kind: traces.ToolResult, Blocks: blocks})
	case "restart":
		return st.event(t, d, traces.Event{Time: st.at(t, a), Kind: traces.Restart})
	case "floor-change":
		e := traces.Event{Time: st.at(t, a), Kind: traces.FloorChange}
		if cwd, ok := a["cwd"]; ok {
			// A prompt in a new working directory (cwd, was: the
			// directories' keys, traces.MetaEnv).
			e.Meta = map[string]string{traces.MetaCause: traces.CauseWorkingDir, traces.MetaEnv: cwd[0], traces.MetaEnvWas: a["was"][0]}
		}
		return st.event(t, d, e)
	case "model":
		e := traces.Event{Time: st.at(t, a), Kind: traces.ModelSwitch, Model: a["model"][0]}
		if acct, ok := a["account"]; ok {
			e.Meta = map[string]string{"account": acct[0]}
		}
		return st.event(t, d, e)
	case "replay":
		return st.replay(t, a)
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func (st *story) replay(t *testing.T, a map[string][]string) string {
	memo := estimate.NewMemo(storyTokens{})
	pol := NewRecorded()
	if p, ok := a["policy"]; ok && p[0] != RecordedName {
		cfg, err := policies.Preset(p[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range a["set"] {
			k, v, _ := strings.Cut(kv, "=")
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if pol, err = NewPolicy(cfg, memo); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := a["variant"]; ok {
		var err error
		cfg := policies.Default()
		cfg.Compact.Enabled = false
		if pol, err = NewRecordedVariant("variant-"+v[0], cfg, v[0], memo); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Prices: pricing.Default(), Count: memo.CountHash,
		Summarizer: func(s *traces.Session) compact.Summarizer { return fixedSummary{} }}
	_, opts.Prewarm = a["prewarm"]
	if _, ok := a["calibrate"]; ok {
		opts.Calibrate = func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) }
	}
	accounts := map[string]provider.Provider{}
	opts.Account = func(acct string) provider.Provider {
		if accounts[acct] == nil {
			accounts[acct] = provider.NewAnthropic(provider.AnthropicOptions{})
		}
		return accounts[acct]
	}
	res, err := RunTenant(context.Background(), st.sessions, pol, provider.NewAnthropic(provider.AnthropicOptions{}), opts)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var recs []Record
	for _, r := range res {
		recs = append(recs, r.Records...)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %-7s +%-6s", r.Trace, r.Kind, r.Time.Sub(storyT0))
		if r.Kind == KindCall {
			u := r.Usage
			fmt.Fprintf(&b, " prompt=%d in=%d w5m=%d w1h=%d read=%d", r.Prompt, u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead)
			if r.MissReason != "" {
				fmt.Fprintf(&b, " miss=%s/%d", r.MissReason, r.MissTokens)
			}
			if v, ok := r.DetailValue(DetailFloorKept); ok {
				fmt.Fprintf(&b, " floor_kept=%g", v)
			}
			if r.StallMS > 0 {
				fmt.Fprintf(&b, " stall=%dms", r.StallMS)
			}
			if r.Error != "" {
				fmt.Fprintf(&b, " error=%q", r.Error)
			}
		} else {
			fmt.Fprintf(&b, " %s/%s %d→%d", r.Trigger, r.Outcome, r.TokensBefore, r.TokensAfter)
		}
		b.WriteString("\n")
	}
	return b.String()
}

package sim

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// FuzzReplay checks the replay's invariants on any native trace that
// reads and validates (what every command replays): it ends within a
// bound, and every figure it bills is a finite, non-negative number.
func FuzzReplay(f *testing.F) {
	hdr := `{"format":"ctxsim-trace","version":1,"session":{"id":"s","source":"cli","model":"claude-opus-4-6"}}`
	ev := func(sec int, kind, rest string) string {
		return `{"t":"2026-01-01T00:00:` + string(rune('0'+sec/10)) + string(rune('0'+sec%10)) + `Z","kind":"` + kind + `"` + rest + "}"
	}
	user := `,"blocks":[{"type":"text","text":"hello there"}]`
	call := `,"blocks":[{"type":"tool_use","id":"t1","name":"Read","input":"{}"}],"model":"claude-opus-4-6","usage":{"input":3,"cache_write_5m":2000,"cache_write_1h":0,"cache_read":0,"output":50}`
	result := `,"blocks":[{"type":"tool_result","id":"t1","text":"` + strings.Repeat("x ", 500) + `"}]`
	f.Add([]byte(hdr + "\n" + ev(0, "user", user) + "\n" + ev(1, "assistant", call) + "\n" + ev(2, "tool_result", result) + "\n"))
	// Issue 10's replays: a huge count, a compaction first, a model switch
	// to an unknown model, a long gap.
	f.Add([]byte(hdr + "\n" + ev(0, "user", user) + "\n" + ev(1, "assistant", strings.Replace(call, `"output":50`, `"output":1000000000`, 1)) + "\n"))
	f.Add([]byte(hdr + "\n" + ev(0, "compaction", "") + "\n" + ev(1, "user", user) + "\n" + ev(2, "model_switch", `,"model":"nobody-1"`) + "\n" + ev(3, "user", user) + "\n"))
	f.Add([]byte(hdr + "\n" + ev(0, "user", user) + "\n" + `{"t":"2099-01-01T00:00:00Z","kind":"user","blocks":[{"type":"text","text":"later"}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := traces.ReadSession(bytes.NewReader(data), "f")
		if err != nil || len(traces.Validate(s)) > 0 || len(s.Events) > 200 {
			return
		}
		pol := &Policy{Name: "fuzz", Planner: markLastPlanner{}, TTL: func(*traces.Session) prompt.TTL { return prompt.TTL5m }}
		type out struct {
			res *Result
			err error
		}
		done := make(chan out, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		go func() {
			res, err := Run(ctx, s, pol, provider.NewAnthropic(provider.AnthropicOptions{}), testOpts())
			done <- out{res, err}
		}()
		var o out
		select {
		case o = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("replay of %d events did not end within 30s", len(s.Events))
		}
		if o.err != nil {
			if ctx.Err() != nil {
				t.Fatalf("replay of %d events ran past its 20s deadline", len(s.Events))
			}
			return // refused with an error: allowed
		}
		for _, r := range o.res.Records {
			u := r.Usage
			if u.Input < 0 || u.CacheWrite5m < 0 || u.CacheWrite1h < 0 || u.CacheRead < 0 || u.Output < 0 {
				t.Fatalf("negative usage %+v", u)
			}
			if math.IsNaN(r.CostUSD) || math.IsInf(r.CostUSD, 0) || r.CostUSD < 0 {
				t.Fatalf("cost %v", r.CostUSD)
			}
		}
	})
}

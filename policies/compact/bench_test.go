package compact_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// BenchmarkHooks is the manager's per-call overhead on a 1000-message view
// with a 20K-token system prompt, under the threshold: BeforeCall,
// Estimates (rough, calibrated and exact with o200k), AfterResponse; the
// +exact case drives the triggers with the exact estimator. Calls alternate between two views that differ
// in their last message, so every call estimates a view it has not seen.
func BenchmarkHooks(b *testing.B) {
	for _, name := range []string{"hermes-default", "hermes-default+exact", "hermes-prune", "masking-batched"} {
		b.Run(name, func(b *testing.B) {
			preset, estimator, _ := strings.Cut(name, "+")
			c, err := policies.Preset(preset)
			if err != nil {
				b.Fatal(err)
			}
			if estimator != "" {
				if err := c.Set("estimate.kind", estimator); err != nil {
					b.Fatal(err)
				}
			}
			tok, err := tiktoken.Get("o200k_base")
			if err != nil {
				b.Fatal(err)
			}
			m, err := c.NewManager(compact.Model{Name: "m", Window: 1_000_000}, &fakeSummarizer{}, estimate.NewExact(estimate.NewMemo(tok), 3))
			if err != nil {
				b.Fatal(err)
			}
			v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: filler("system", 20_000)}}}
			for i := 0; i < 1000; i++ {
				role := [...]prompt.Role{prompt.RoleUser, prompt.RoleAssistant}[i%2]
				v.Messages = append(v.Messages, prompt.NewMessage(role, []traces.Block{{Kind: traces.Text, Text: filler(fmt.Sprint(i), 40)}}, i, prompt.Plain))
			}
			w := v.Clone()
			w.Messages[len(w.Messages)-1] = prompt.NewMessage(prompt.RoleAssistant, []traces.Block{{Kind: traces.Text, Text: "other"}}, 999, prompt.Plain)
			views := [2]*prompt.View{v, w}
			now := time.Unix(0, 0)
			m.AfterResponse(now, v, providerCount(v), true)
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				nv, _, _ := m.BeforeCall(context.Background(), now, views[i%2])
				_ = m.Estimates(nv)
				m.AfterResponse(now, nv, 60_000, true)
			}
		})
	}
}

package compact

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// mask is observation masking (OpenHands' observation_masking condenser;
// "The Complexity Trap"): every tool observation but the last KeepLast
// tool-result rows becomes ClearedPlaceholder; calls and reasoning stay. It
// commits only when it reclaims at least gate tokens (MsgBudget), and
// reports ok=false (and returns v) otherwise.
//
// Sliding masking (gate 1) rewrites one aged-out observation per turn, so
// it breaks the prompt cache every turn at that point; batched masking
// waits for gate tokens, trading occupancy for fewer breaks.
func (m *Manager) mask(v *prompt.View, trigger string, gate int) (*prompt.View, Pass, bool) {
	msgs := v.Messages
	keep := max(m.cfg.Masking.KeepLast, 0)
	seen := 0
	var out []prompt.Message
	masked, reclaim := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != prompt.RoleTool {
			continue
		}
		if seen++; seen <= keep {
			continue
		}
		var blocks []traces.Block
		for j, b := range msgs[i].Blocks {
			if b.Kind != traces.ToolResultBlock || len(b.Text) <= len(ClearedPlaceholder) {
				continue
			}
			if blocks == nil {
				blocks = append([]traces.Block(nil), msgs[i].Blocks...)
			}
			blocks[j].Text = ClearedPlaceholder
		}
		if blocks == nil {
			continue
		}
		if out == nil {
			out = append([]prompt.Message(nil), msgs...)
		}
		out[i] = edited(&msgs[i], blocks)
		reclaim += m.memo.sizes().Budget(&msgs[i]) - m.memo.sizes().Budget(&out[i])
		masked++
	}
	if out == nil || reclaim < gate {
		return v, Pass{}, false
	}
	nv := &prompt.View{Tools: v.Tools, System: v.System, Messages: out}
	p := Pass{Kind: KindMasking, Trigger: trigger, Outcome: OutcomeMasked,
		TokensBefore: m.rough.Estimate(v), TokensAfter: m.rough.Estimate(nv),
		Detail: []KV{{"masked_observations", float64(masked)}, {"reclaim_tokens", float64(reclaim)}}}
	return nv, p, true
}

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
	// What masking each observation would reclaim is a property of the
	// message alone, kept by its hash: a turn that does not reach the gate
	// costs a lookup per observation, not a copy of the view.
	var picked []int
	reclaim := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != prompt.RoleTool {
			continue
		}
		if seen++; seen <= keep {
			continue
		}
		if r, ok := m.memo.maskReclaim(&msgs[i]); ok {
			picked = append(picked, i)
			reclaim += r
		}
	}
	if len(picked) == 0 || reclaim < gate {
		return v, Pass{}, false
	}
	out := append([]prompt.Message(nil), msgs...)
	for _, i := range picked {
		out[i], _ = masked(&msgs[i])
	}
	nv := &prompt.View{Tools: v.Tools, System: v.System, Messages: out}
	p := Pass{Kind: KindMasking, Trigger: trigger, Outcome: OutcomeMasked,
		TokensBefore: m.rough.Estimate(v), TokensAfter: m.rough.Estimate(nv),
		Detail: []KV{{"masked_observations", float64(len(picked))}, {"reclaim_tokens", float64(reclaim)}}}
	return nv, p, true
}

// masked is msg with every tool result longer than ClearedPlaceholder
// cleared, and whether there was one.
func masked(msg *prompt.Message) (prompt.Message, bool) {
	var blocks []traces.Block
	for j, b := range msg.Blocks {
		if b.Kind != traces.ToolResultBlock || len(b.Text) <= len(ClearedPlaceholder) {
			continue
		}
		if blocks == nil {
			blocks = append([]traces.Block(nil), msg.Blocks...)
		}
		blocks[j].Text = ClearedPlaceholder
	}
	if blocks == nil {
		return *msg, false
	}
	return edited(msg, blocks), true
}

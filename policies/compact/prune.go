package compact

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// Phase-1 prune limits (context_compressor.py _prune_old_tool_results).
const (
	dedupeMinChars  = 200 // pass 1: identical results this long keep only the newest
	summaryMinChars = 200 // pass 2 floor inside batch compaction
	argsMaxChars    = 500 // pass 3: tool-call arguments longer than this...
	argsValueChars  = 200 // ...have their JSON string values cut to this
	tailVerbatim    = 3   // pass 4 keeps the last 3 messages verbatim
)

// callInfo is a tool call as a demotion names it, with the call block's
// hash (0 for no call), which keys the demotion in a Memo.
type callInfo struct {
	name, input string
	hash        uint64
}

func toolCalls(msgs []prompt.Message) map[string]callInfo {
	calls := make(map[string]callInfo, len(msgs)/2) // about one call per exchange
	for i := range msgs {
		for j := range msgs[i].Blocks {
			if b := &msgs[i].Blocks[j]; b.Kind == traces.ToolUse {
				calls[b.ID] = callInfo{b.Name, b.Input, msgs[i].BlockHash(j)}
			}
		}
	}
	return calls
}

// oneLineSummary is pass 2's replacement for a long tool result, in the
// shape of hermes' "[terminal] ran `cmd` -> exit N, L lines output".
func oneLineSummary(c callInfo, b *traces.Block) string {
	name := c.name
	if name == "" {
		name = "tool"
	}
	status := "ok"
	if b.IsError {
		status = "error"
	}
	lines := strings.Count(b.Text, "\n") + 1
	return fmt.Sprintf("[%s] %s -> %s, %d lines output (%d chars)", name, oneLine(c.input, 120), status, lines, len(b.Text))
}

func isPlaceholder(s string) bool {
	return s == ClearedPlaceholder || s == DuplicatePlaceholder || strings.HasPrefix(s, "[") && strings.Contains(s, "] ") && strings.HasSuffix(s, " chars)")
}

// truncateArgs cuts every JSON string value of a tool call's arguments to
// argsValueChars, keeping the JSON valid. Arguments that are not JSON are
// left alone.
func truncateArgs(input string) (string, bool) {
	if len(input) <= argsMaxChars {
		return input, false
	}
	var v any
	if err := json.Unmarshal([]byte(input), &v); err != nil {
		return input, false
	}
	var cut func(any) any
	cut = func(x any) any {
		switch t := x.(type) {
		case string:
			if len(t) > argsValueChars {
				return t[:safeCut(t, argsValueChars)] + "…[truncated]"
			}
		case map[string]any:
			for k, e := range t {
				t[k] = cut(e)
			}
		case []any:
			for i, e := range t {
				t[i] = cut(e)
			}
		}
		return x
	}
	out, err := json.Marshal(cut(v)) // map keys come out sorted: deterministic
	if err != nil || len(out) >= len(input) {
		return input, false
	}
	return string(out), true
}

// pruneOpts selects the prune passes and their limits.
type pruneOpts struct {
	memo            *Memo // what the passes derive from blocks, kept
	head, tailStart int
	minChars        int // pass 2 floor
	// demoteTail enables pass 4 (batch compaction only): when the tail's
	// budget is over 1.5× tailBudget, its tool outputs are demoted too,
	// except the last tailVerbatim messages.
	demoteTail bool
	tailBudget int
}

// prunePasses runs hermes' deterministic passes over msgs and returns the
// new list; unchanged messages are shared. The input is never modified.
func prunePasses(msgs []prompt.Message, o pruneOpts) []prompt.Message {
	out := append([]prompt.Message(nil), msgs...)
	calls := toolCalls(msgs)
	blocks := make([][]traces.Block, len(msgs)) // copy-on-write per message
	mut := func(i int) []traces.Block {
		if blocks[i] == nil {
			blocks[i] = append([]traces.Block(nil), msgs[i].Blocks...)
		}
		return blocks[i]
	}
	// Pass 1: identical tool results keep only the newest copy (also in the
	// tail).
	seen := map[uint64]bool{}
	for i := len(msgs) - 1; i >= o.head; i-- {
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			if b.Kind != traces.ToolResultBlock || len(b.Text) < dedupeMinChars {
				continue
			}
			h := o.memo.textHash(b, msgs[i].BlockHash(j))
			if seen[h] {
				mut(i)[j].Text = DuplicatePlaceholder
			}
			seen[h] = true
		}
	}
	demote := func(i int, floor int) {
		for j := range msgs[i].Blocks {
			b := &mut(i)[j]
			// A result no earlier pass replaced is still msgs[i]'s block
			// (a replaced one is a placeholder), so its hash keys the memo.
			if b.Kind == traces.ToolResultBlock && len(b.Text) > floor && !isPlaceholder(b.Text) {
				b.Text = o.memo.oneLine(calls[b.ID], b, msgs[i].BlockHash(j))
			}
		}
	}
	for i := o.head; i < o.tailStart && i < len(msgs); i++ {
		// Pass 2: long results outside the tail become one line.
		if msgs[i].Role == prompt.RoleTool {
			demote(i, o.minChars)
		}
		// Pass 3: long tool-call arguments are cut.
		if msgs[i].Role == prompt.RoleAssistant {
			for j := range msgs[i].Blocks {
				if b := &msgs[i].Blocks[j]; b.Kind == traces.ToolUse {
					if s, ok := o.memo.truncate(b, msgs[i].BlockHash(j)); ok {
						mut(i)[j].Input = s
					}
				}
			}
		}
	}
	// Pass 4: an oversized tail is demoted too (#61932).
	if o.demoteTail && o.tailStart < len(msgs) {
		sum := 0
		for i := o.tailStart; i < len(msgs); i++ {
			sum += o.memo.sizes().Budget(&msgs[i])
		}
		if sum > o.tailBudget*3/2 {
			for i := o.tailStart; i < len(msgs)-tailVerbatim; i++ {
				if msgs[i].Role == prompt.RoleTool {
					demote(i, summaryMinChars)
				}
			}
		}
	}
	for i, bl := range blocks {
		if bl != nil && !slices.Equal(bl, msgs[i].Blocks) {
			out[i] = edited(&msgs[i], bl)
		}
	}
	return out
}

// reclaimed is what rewriting before into after (the same messages, some
// edited) saves by MsgBudget. Only edited messages are measured: the rest
// are the same messages, with the same hash.
func (m *Manager) reclaimed(before, after []prompt.Message) int {
	n := 0
	for i := range before {
		if before[i].Hash() != after[i].Hash() {
			n += m.memo.sizes().Budget(&before[i]) - m.memo.sizes().Budget(&after[i])
		}
	}
	return n
}

// prune is hermes' prune_tool_results_only: passes 1–3 outside a tail of
// protect_last_n messages, committed only when it reclaims at least gate
// tokens (measured with MsgBudget). Below the gate the input view comes back
// as is (the same pointer): no rewrite, no cache break.
func (m *Manager) prune(v *prompt.View, kind Kind, trigger string, gate int) (*prompt.View, Pass) {
	before := m.rough.Estimate(v)
	p := Pass{Kind: kind, Trigger: trigger, TokensBefore: before, TokensAfter: before}
	msgs := v.Messages
	head := m.headCount(msgs)
	if len(msgs) <= m.cfg.ProtectLastN+head+1 {
		p.Outcome = OutcomeTooFew
		return v, p
	}
	pruned := prunePasses(msgs, pruneOpts{memo: m.memo, head: head, tailStart: len(msgs) - m.cfg.ProtectLastN, minChars: m.cfg.pruneMinChars()})
	reclaim := m.reclaimed(msgs, pruned)
	p.Detail = []KV{{"gate_tokens", float64(gate)}, {"reclaim_tokens", float64(reclaim)}}
	if reclaim < gate || reclaim <= 0 {
		p.Outcome = OutcomeBelowReclaim
		return v, p
	}
	nv := &prompt.View{Tools: v.Tools, System: v.System, Messages: pruned}
	p.Outcome = OutcomePruned
	p.TokensAfter = m.rough.Estimate(nv)
	return nv, p
}

// afterToolResults reports whether v's last message is tool results: hermes
// runs the proactive prune from its post-tool path, after tool results are
// appended (run_agent's loop; tests/run_agent/test_proactive_prune_loop_wiring.py),
// not before a call that opens a turn.
func afterToolResults(v *prompt.View) bool {
	n := len(v.Messages)
	return n > 0 && v.Messages[n-1].Role == prompt.RoleTool
}

// rearmPrune sets the rearm mark after committed prune p produced nv: the
// messages' MsgBudget size after it plus a runway of max(reclaimed,
// trigger, min_reclaim), on the scale the gate reads (hermes'
// prune_tool_results_only: next_rearm_tokens = after + runway, both sums of
// _estimate_msg_budget_tokens over the messages). It is durable, as hermes
// persists it under _proactive_prune_rearm_tokens.
func (m *Manager) rearmPrune(nv *prompt.View, p Pass) Pass {
	reclaim := 0
	for _, kv := range p.Detail {
		if kv.Key == "reclaim_tokens" {
			reclaim = int(kv.Value)
		}
	}
	runway := max(reclaim, m.cfg.ProactivePruneTokens, m.cfg.ProactivePruneMinReclaimTokens)
	m.dur.PruneRearm = m.budget.Sum(nv.Messages) + runway
	p.Detail = append(p.Detail, KV{"rearm_tokens", float64(m.dur.PruneRearm)})
	return p
}

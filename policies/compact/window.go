package compact

import (
	"strings"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// wireUser reports whether m is a user-role message on the Anthropic wire
// (a user message or a tool-result row).
func wireUser(m *prompt.Message) bool { return m.Role == prompt.RoleUser || m.Role == prompt.RoleTool }

// realUser reports whether m is a message the person wrote (not a summary
// marker and not a tool result row).
func realUser(m *prompt.Message) bool { return m.Role == prompt.RoleUser && !IsSummary(m) }

// headCount is the protected head after the system prompt: protect_first_n
// messages, decaying to 0 once any compaction happened or a summary sits
// near the head (#11996).
func (m *Manager) headCount(msgs []prompt.Message) int {
	if m.dur.Compactions > 0 {
		return 0
	}
	h := min(max(m.cfg.ProtectFirstN, 0), len(msgs))
	for i := 0; i < len(msgs) && i <= h; i++ {
		if IsSummary(&msgs[i]) {
			return 0
		}
	}
	return h
}

// alignForward moves i past tool-result rows so a window never starts with
// results whose call it cut off.
func alignForward(msgs []prompt.Message, i int) int {
	for i < len(msgs) && msgs[i].Role == prompt.RoleTool {
		i++
	}
	return i
}

// tailCut is hermes' _find_tail_cut_by_tokens: the index where the
// protected tail starts. It walks back from the end summing MsgBudget up to
// the 1.5× soft ceiling (re-walking with the raw budget when everything
// fits), keeps at least max(3, min(protect_last_n, 8)) messages (but leaves
// at least 2 compressible), never splits a tool group, and keeps the last
// MinTailUserMessages real user messages and (batch) the last visible
// assistant reply in the tail.
//
// With splitTurn false (micro-compaction) the tail also starts at a turn
// boundary: a real user message, so an exchange is never cut in two.
func (m *Manager) tailCut(msgs []prompt.Message, budget, start int, splitTurn bool) int {
	n := len(msgs)
	minTail := max(3, min(m.cfg.ProtectLastN, 8))
	minTail = max(min(minTail, n-start-2), 0)
	walk := func(limit int) int {
		acc, cut := 0, n
		for i := n - 1; i >= start; i-- {
			acc += m.memo.sizes().Budget(&msgs[i])
			if acc > limit && n-i > minTail {
				break
			}
			cut = i
		}
		return cut
	}
	soft := budget * 3 / 2
	if m.cfg.TailMode != TailLegacy {
		// Lean mode caps the soft ceiling too at 20% of the window.
		soft = min(soft, int(float64(m.model.Window)*0.20))
	}
	cut := walk(soft)
	if cut <= start {
		cut = walk(budget)
	}
	cut = min(cut, n-minTail)
	// Never split a tool group: a tail may not open with tool results.
	for cut > start && cut < n && msgs[cut].Role == prompt.RoleTool {
		cut--
	}
	if !splitTurn {
		for cut > start && cut < n && !realUser(&msgs[cut]) {
			cut--
		}
	}
	if splitTurn {
		// Batch compaction keeps the last visible assistant reply (#29824).
		for i := n - 1; i >= start; i-- {
			if msgs[i].Role == prompt.RoleAssistant && !IsSummary(&msgs[i]) && hasText(&msgs[i]) {
				cut = min(cut, i)
				break
			}
		}
	}
	// Anchor the last real user messages in the tail (#10896).
	need := max(m.cfg.MinTailUserMessages, 0)
	for i := n - 1; i >= start && need > 0; i-- {
		if realUser(&msgs[i]) {
			need--
			if i < cut {
				cut = i
			}
		}
	}
	return max(cut, start)
}

func hasText(m *prompt.Message) bool {
	for i := range m.Blocks {
		if m.Blocks[i].Kind == traces.Text && strings.TrimSpace(m.Blocks[i].Text) != "" {
			return true
		}
	}
	return false
}

// edited returns a copy of msg with new blocks, tagged Edited. A block
// equal to msg's block at the same index keeps that block's hash: only the
// blocks a pass rewrote are hashed again.
func edited(msg *prompt.Message, blocks []traces.Block) prompt.Message {
	tag := msg.Tag
	if tag == prompt.Plain {
		tag = prompt.Edited
	}
	hs := make([]uint64, len(blocks))
	for j := range blocks {
		if j < len(msg.Blocks) && blocks[j] == msg.Blocks[j] {
			hs[j] = msg.BlockHash(j)
		} else {
			hs[j] = blocks[j].Hash()
		}
	}
	return prompt.NewMessageHashed(msg.Role, blocks, hs, msg.Event, tag)
}

// sanitizeToolPairs drops tool results whose call is not in the view and
// tool calls whose result is not (hermes' _sanitize_tool_pairs), so a
// rewrite never sends an orphan. The last message's calls are kept: their
// results may not exist yet.
func sanitizeToolPairs(msgs []prompt.Message) []prompt.Message {
	calls, results := map[string]bool{}, map[string]bool{}
	for i := range msgs {
		for _, b := range msgs[i].Blocks {
			switch b.Kind {
			case traces.ToolUse:
				calls[b.ID] = true
			case traces.ToolResultBlock:
				results[b.ID] = true
			}
		}
	}
	out := msgs[:0:0]
	for i := range msgs {
		msg := &msgs[i]
		keep := msg.Blocks
		changed := false
		for j, b := range msg.Blocks {
			orphan := b.ID != "" && (b.Kind == traces.ToolResultBlock && !calls[b.ID] ||
				b.Kind == traces.ToolUse && !results[b.ID] && i != len(msgs)-1)
			if orphan && !changed {
				keep = append([]traces.Block(nil), msg.Blocks[:j]...)
				changed = true
			} else if !orphan && changed {
				keep = append(keep, b)
			}
		}
		switch {
		case !changed:
			out = append(out, *msg)
		case len(keep) > 0:
			out = append(out, edited(msg, keep))
		}
	}
	return out
}

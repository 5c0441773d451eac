package codex

import (
	"slices"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// Encrypted reasoning is sent back with every later request of the turn
// and costs as input what it cost as output: in the API captures
// (../shared/traces/captures, trace_codex.json calls 4–14) each request
// grows by the text of the items added plus the previous call's
// reasoning_tokens plus about 8 tokens per item, to the token (84, 112,
// 418, 491, 60, 58, 33, 42, 75 reasoning tokens; 31–35 tokens of framing
// for four items). At the next user turn the API drops it (corpus
// anmol0b/Trezo-Ai 1bf566ba: 57 reasoning tokens, and the next turn's
// prompt grows by 34); the replay's builder does that
// (prompt.StripsThinking). So a reasoning item is an opaque thinking block
// sized from its call's reasoning_output_tokens, split over the call's
// items by their size.
//
// The reasoning of a call that ran server-side tools (a web search) is not
// sent again: corpus anmol0b/Trezo-Ai ff1815ba lines 41–82, a call of four
// searches and 1,606 reasoning tokens bills 5,986 tokens of results, and
// the next call grows by what was added less 1,648 (1,606 plus framing),
// keeping the results. Its items are left empty (and dropped).
type reasoningRef struct{ ev, blk, enc int }

// reason appends a reasoning item to the call in progress: its summary
// text, and its encrypted content as an opaque block sized when the
// call's token_count comes.
func (rd *reader) reason(at time.Time, it *responseItem) {
	blocks := texts(it.Summary, traces.Thinking)
	ev := rd.output(at, blocks...)
	if it.EncryptedContent == "" {
		return
	}
	e := &rd.s.Events[ev]
	e.Blocks = append(e.Blocks, opaque(traces.Thinking, "reasoning", it.EncryptedContent, 0))
	rd.reasoning = append(rd.reasoning, reasoningRef{ev: ev, blk: len(e.Blocks) - 1, enc: len(it.EncryptedContent)})
}

// reasoningOverhead is the length of an encrypted reasoning item that
// holds no reasoning tokens: over the corpus's 32 calls with one item,
// tokens ≈ (length − 900) × 0.141 (952 characters for 7 tokens, 3,704 for
// 395). It weighs a call's items, and sizes an item whose call has no
// token_count (a copied history, an aborted call).
const reasoningOverhead = 900

func reasoningWeight(enc int) int { return max(1, enc-reasoningOverhead) }

// sizeReasoning gives the reasoning items of call ev their share of the
// call's reasoning tokens.
func (rd *reader) sizeReasoning(ev, tokens int) {
	total := 0
	for _, r := range rd.reasoning {
		if r.ev == ev {
			total += reasoningWeight(r.enc)
		}
	}
	if total == 0 {
		return
	}
	left := tokens
	var last *traces.Block
	rd.reasoning = slices.DeleteFunc(rd.reasoning, func(r reasoningRef) bool {
		if r.ev != ev {
			return false
		}
		b := &rd.s.Events[r.ev].Blocks[r.blk]
		b.Tokens = tokens * reasoningWeight(r.enc) / total
		left -= b.Tokens
		last = b
		return true
	})
	last.Tokens += left
}

// finishReasoning sizes the items no token_count sized from their length,
// and drops the ones left empty.
func (rd *reader) finishReasoning() {
	for _, r := range rd.reasoning {
		rd.s.Events[r.ev].Blocks[r.blk].Tokens = max(0, (r.enc-reasoningOverhead)*141/1000)
	}
	rd.reasoning = nil
	for i := range rd.s.Events {
		e := &rd.s.Events[i]
		e.Blocks = slices.DeleteFunc(e.Blocks, func(b traces.Block) bool {
			return b.Kind == traces.Thinking && b.Text == "" && b.Tokens == 0
		})
	}
}

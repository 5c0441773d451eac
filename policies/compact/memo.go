package compact

import (
	"sync"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Memo keeps what the ladder derives from block content alone, under the
// blocks' content hashes (prompt.Message.BlockHash): a tool call's cut
// arguments (a JSON decode and re-encode), a tool result's one-line
// demotion and its text's hash, and the rough rules' block sizes; and,
// under a message's hash, what masking its observations reclaims. Each is
// computed once per distinct block or message, not once per pass, per
// call or per replay of the same sessions.
//
// Every entry is a pure function of its key, so a Manager decides the same
// with any Memo, a fresh one or one shared with other sessions: a Memo is
// neither Durable nor volatile session state, and Restart leaves it alone.
// One Memo may be shared by every Manager of a process (Manager.ShareMemo);
// it is safe for concurrent use. The zero value is ready; a nil *Memo keeps
// nothing and computes every value where it is needed.
type Memo struct {
	// Sizes are the rough estimator's and MsgBudget's block sizes.
	Sizes estimate.RoughSizes

	mu    sync.RWMutex
	args  map[uint64]argsCut   // truncateArgs of a call's input, by the call block's hash
	lines map[demoteKey]string // oneLineSummary, by the result's and its call's hashes
	texts map[uint64]uint64    // traces.HashString of a result's text, by its block's hash
	masks map[uint64]maskCut   // what masking a message reclaims, by the message's hash
}

type maskCut struct {
	reclaim int
	ok      bool
}

type argsCut struct {
	out string
	ok  bool
}

// demoteKey is a tool result's block hash and its call's (0: no call).
type demoteKey struct{ result, call uint64 }

// sizes is mm's block sizes, nil (computed each time) for a nil Memo.
func (mm *Memo) sizes() *estimate.RoughSizes {
	if mm == nil {
		return nil
	}
	return &mm.Sizes
}

// memoized is m[k], computed by f and kept on a miss.
func memoized[K comparable, V any](mu *sync.RWMutex, m *map[K]V, k K, f func() V) V {
	mu.RLock()
	v, ok := (*m)[k]
	mu.RUnlock()
	if ok {
		return v
	}
	v = f()
	mu.Lock()
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
	mu.Unlock()
	return v
}

// truncate is truncateArgs(b.Input) for tool call b with hash h.
func (mm *Memo) truncate(b *traces.Block, h uint64) (string, bool) {
	if len(b.Input) <= argsMaxChars {
		return b.Input, false
	}
	if mm == nil {
		return truncateArgs(b.Input)
	}
	c := memoized(&mm.mu, &mm.args, h, func() argsCut {
		out, ok := truncateArgs(b.Input)
		return argsCut{out, ok}
	})
	return c.out, c.ok
}

// oneLine is oneLineSummary(c, b) for tool result b with hash h.
func (mm *Memo) oneLine(c callInfo, b *traces.Block, h uint64) string {
	if mm == nil {
		return oneLineSummary(c, b)
	}
	return memoized(&mm.mu, &mm.lines, demoteKey{h, c.hash}, func() string { return oneLineSummary(c, b) })
}

// textHash is traces.HashString(b.Text) for block b with hash h.
func (mm *Memo) textHash(b *traces.Block, h uint64) uint64 {
	if mm == nil {
		return traces.HashString(b.Text)
	}
	return memoized(&mm.mu, &mm.texts, h, func() uint64 { return traces.HashString(b.Text) })
}

// maskReclaim is the MsgBudget tokens masking msg reclaims (masked), and
// whether it has anything to mask.
func (mm *Memo) maskReclaim(msg *prompt.Message) (int, bool) {
	f := func() maskCut {
		out, ok := masked(msg)
		if !ok {
			return maskCut{}
		}
		return maskCut{mm.sizes().Budget(msg) - mm.sizes().Budget(&out), true}
	}
	if mm == nil {
		c := f()
		return c.reclaim, c.ok
	}
	c := memoized(&mm.mu, &mm.masks, msg.Hash(), f)
	return c.reclaim, c.ok
}

package estimate

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// An Estimator sizes the prompt a view would make, before it is sent.
type Estimator interface {
	// Name identifies the estimator in records ("rough", "exact", ...).
	Name() string
	// Estimate is the prompt size of v in tokens.
	Estimate(v *prompt.View) int
}

// An Estimate is one estimator's reading of a prompt, reported next to the
// billed size so its error can be measured.
type Estimate struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// msgCache memoizes per-message sizes under the message's content hash,
// which a Message computes once: an estimate of a view costs one map lookup
// per message, not a pass over its text.
type msgCache map[uint64]int

func (c msgCache) get(m *prompt.Message, size func(*prompt.Message) int) int {
	h := m.Hash()
	if n, ok := c[h]; ok {
		return n
	}
	n := size(m)
	c[h] = n
	return n
}

// floorKey identifies a view's floor by the identity of its slices. Views
// are immutable (a policy that changes the floor makes new slices), so the
// same backing arrays mean the same floor, and a floor's size and hash are
// computed once instead of once per call: with a 20K-token system prompt
// that is most of an estimate's cost.
type floorKey struct {
	tools, sys *traces.Block
	nt, ns     int
}

func keyOf(v *prompt.View) floorKey {
	k := floorKey{nt: len(v.Tools), ns: len(v.System)}
	if k.nt > 0 {
		k.tools = &v.Tools[0]
	}
	if k.ns > 0 {
		k.sys = &v.System[0]
	}
	return k
}

// RoughEstimator is hermes' estimate_request_tokens_rough: system + messages
// + tool schemas with the Rough rules. It is not safe for concurrent use
// (one per session).
type RoughEstimator struct {
	incremental
	// Sizes, when set, keeps block sizes beyond this estimator (it may be
	// shared, by every session of a process); nil sizes every new message.
	Sizes *RoughSizes
	// Floors, when set, hashes a new floor for this estimator and the
	// others of its session that share it (see FloorHashes).
	Floors *FloorHashes
}

// incremental is what an estimator keeps between calls so that each costs
// what changed: message sizes by hash (made on first use, by an estimator
// without shared sizes), the floor by slice identity, the
// last view by identity (the hooks of one call ask about the same view
// several times) and the prefix sums of the last view's messages.
type incremental struct {
	cache    msgCache
	floorKey floorKey
	floor    int
	lastKey  viewKey
	lastSize int
	prefix   prefixSums
}

// floorOf is v's floor, sized by size when v's tools or system changed.
func (s *incremental) floorOf(v *prompt.View, size func(*prompt.View) int) int {
	if k := keyOf(v); k != s.floorKey || k == (floorKey{}) {
		s.floorKey, s.floor = k, size(v)
	}
	return s.floor
}

// estimate is floor plus every message, sizing only what is new.
func (s *incremental) estimate(v *prompt.View, floor func(*prompt.View) int, size func(*prompt.Message) int) int {
	k := viewKeyOf(v)
	if k == s.lastKey && k.msgs != nil && k.floor != (floorKey{}) {
		return s.lastSize
	}
	n := s.floorOf(v, floor) + s.prefix.sum(v.Messages, size)
	s.lastKey, s.lastSize = k, n
	return n
}

// viewKey identifies a view by the identity of its slices, its length and
// its last message's hash (which catches a slice truncated and refilled in
// place to the same length).
type viewKey struct {
	floor floorKey
	msgs  *prompt.Message
	n     int
	last  uint64
}

// A prefixSums remembers the messages of the last view estimated, by
// content hash, with the running total of their sizes: the next estimate
// sums only the messages after the common prefix. Finding the prefix
// compares one hash per message (about 1.5 ns each), where summing through
// the cache is a map lookup per message (about 20 ns), so a session's
// estimates cost what its changes do plus a cheap pass.
type prefixSums struct {
	known
	sums []int // sums[i] is the size of messages [0, i); len(hashes)+1
}

// known is the messages of the last list seen, by content hash, and the
// list's first element: the next list's common prefix with it is found in
// O(1) when it is the same list grown (see common).
type known struct {
	first  *prompt.Message
	hashes []uint64
}

// common is the length of the common prefix of msgs[:n] and the messages
// known. A list in the same backing array as the last one and agreeing with
// it on the last message both hold is taken to agree on all before: views
// are immutable (a policy that rewrites a message makes a new list), the
// rule the estimators' view keys already rely on. Any other list is
// compared hash by hash.
func (kn *known) common(msgs []prompt.Message, n int) int {
	m := min(n, len(msgs), len(kn.hashes))
	if m > 0 && &msgs[0] == kn.first && kn.hashes[m-1] == msgs[m-1].Hash() {
		return m
	}
	k := 0
	for ; k < m && kn.hashes[k] == msgs[k].Hash(); k++ {
	}
	return k
}

// keep truncates the known messages to the first k of msgs, whose first
// element becomes the list's identity.
func (kn *known) keep(msgs []prompt.Message, k int) {
	kn.hashes, kn.first = kn.hashes[:k], nil
	if len(msgs) > 0 {
		kn.first = &msgs[0]
	}
}

// sum is the size of msgs, sizing those after the common prefix with the
// last call's by size.
func (p *prefixSums) sum(msgs []prompt.Message, size func(*prompt.Message) int) int {
	k := p.common(msgs, len(msgs))
	if p.sums == nil {
		p.sums = make([]int, 1, len(msgs)+1)
	}
	p.keep(msgs, k)
	p.sums = p.sums[:k+1]
	total := p.sums[k]
	for i := k; i < len(msgs); i++ {
		total += size(&msgs[i])
		p.hashes = append(p.hashes, msgs[i].Hash())
		p.sums = append(p.sums, total)
	}
	return total
}

func viewKeyOf(v *prompt.View) viewKey {
	k := viewKey{floor: keyOf(v), n: len(v.Messages)}
	if k.n > 0 {
		k.msgs = &v.Messages[0]
		k.last = v.Messages[k.n-1].Hash()
	}
	return k
}

// NewRough returns a rough estimator.
func NewRough() *RoughEstimator { return &RoughEstimator{} }

// Floor is the rough size of v's tool schemas and system prompt.
func (e *RoughEstimator) Floor(v *prompt.View) int { return e.floorOf(v, e.floor) }

func (e *RoughEstimator) floor(v *prompt.View) int { return e.Sizes.floor(v, e.Floors) }

// Name is "rough".
func (*RoughEstimator) Name() string { return "rough" }

// Estimate sums the floor and every message.
func (e *RoughEstimator) Estimate(v *prompt.View) int {
	return e.estimate(v, e.floor, e.message())
}

// message is the size of a message for e: from Sizes when e has them, else
// kept in e's own cache.
func (e *RoughEstimator) message() func(*prompt.Message) int {
	if e.Sizes != nil {
		return e.Sizes.Message
	}
	return e.cached(RoughMessage)
}

// cached is size, kept in s's cache by message hash.
func (s *incremental) cached(size func(*prompt.Message) int) func(*prompt.Message) int {
	if s.cache == nil {
		s.cache = msgCache{}
	}
	return func(m *prompt.Message) int { return s.cache.get(m, size) }
}

// Messages is the rough size of v's messages alone.
func (e *RoughEstimator) Messages(msgs []prompt.Message) int {
	n, size := 0, e.message()
	for i := range msgs {
		n += size(&msgs[i])
	}
	return n
}

// RoughFloor is the rough size of the tool schemas and the system prompt.
func RoughFloor(v *prompt.View) int { return (*RoughSizes)(nil).Floor(v) }

// ExactEstimator counts with a tokenizer through a Memo, plus the wire's
// per-message framing. With the tokenizer a provider really uses it equals
// the billed prompt up to framing; with a stand-in (o200k for Claude) its
// error is the tokenizer's.
type ExactEstimator struct {
	Memo *Memo
	// PerMessage is the framing charged per message (prompt.Wire.PerMessage).
	PerMessage int
	// Floors, when set, is the floor hashes shared with the session's other
	// estimators (see FloorHashes).
	Floors *FloorHashes
	incremental
}

// NewExact returns an exact estimator over memo.
func NewExact(memo *Memo, perMessage int) *ExactEstimator {
	return &ExactEstimator{Memo: memo, PerMessage: perMessage}
}

// Name is "exact".
func (*ExactEstimator) Name() string { return "exact" }

// Floor is the counted size of v's tool schemas and system prompt. It keeps
// the last view's prefix sums, which estimating a message-less view would
// throw away.
func (e *ExactEstimator) Floor(v *prompt.View) int { return e.floorOf(v, e.countFloor) }

// Estimate counts the floor and every message.
func (e *ExactEstimator) Estimate(v *prompt.View) int { return e.estimate(v, e.countFloor, e.size) }

func (e *ExactEstimator) countFloor(v *prompt.View) int {
	hs := e.Floors.Of(v)
	return e.Memo.countBlocks(v.Tools, hs) + e.Memo.countBlocks(v.System, hs[len(v.Tools):])
}

func (e *ExactEstimator) size(m *prompt.Message) int { return e.PerMessage + e.Memo.countMessage(m) }

// countMessage is the count of m's blocks (ImageTokens an image), kept under
// m's hash: a message that every replay of a session projects is one lookup
// after the first.
func (m *Memo) countMessage(msg *prompt.Message) int {
	h := msg.Hash()
	m.mu.RLock()
	n, ok := m.msgs[h]
	m.mu.RUnlock()
	if ok {
		return n
	}
	n = 0
	for j := range msg.Blocks {
		b := &msg.Blocks[j]
		if b.Kind == traces.Image && !b.Opaque() {
			n += ImageTokens
			continue
		}
		n += m.CountHash(b, msg.BlockHash(j))
	}
	m.mu.Lock()
	m.msgs[h] = n
	m.mu.Unlock()
	return n
}

// A BudgetSummer sums MsgBudget over messages, sizing only those after the
// common prefix with its last call: the prune's rearm gate reads it before
// every call after tool results. The zero value is ready to use.
type BudgetSummer struct {
	// Sizes, when set, keeps block sizes beyond this summer (see
	// RoughEstimator.Sizes).
	Sizes  *RoughSizes
	cache  msgCache
	prefix prefixSums
}

// Sum is the MsgBudget total of msgs.
func (b *BudgetSummer) Sum(msgs []prompt.Message) int {
	if b.Sizes != nil {
		return b.prefix.sum(msgs, b.Sizes.Budget)
	}
	if b.cache == nil {
		b.cache = msgCache{}
	}
	return b.prefix.sum(msgs, func(m *prompt.Message) int { return b.cache.get(m, MsgBudget) })
}

package hindsight

import (
	"slices"
	"sort"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
)

// A Block is what the cache sees of one content block: the hash chain of
// the prefix through it, the prompt size through its end, and whether it
// may carry cache_control.
type Block struct {
	Chain     uint64
	End       int
	Cacheable bool
}

// A Call is one request of a fixed sequence, as the provider received it.
type Call struct {
	Time time.Time
	// Key is the request's conversation (prompt.Request.Key); costs are
	// reported per key.
	Key   string
	Model string
	// Blocks may share storage with other calls' (a growing conversation
	// is one array); it is never written after the call is taped.
	Blocks        []Block
	Total, Output int
	// ReadLimit, when Limited, is the last block whose cached prefix the
	// provider may serve (prompt.Request.ReadLimit: an observation of the
	// log, part of the fixed sequence).
	ReadLimit int
	Limited   bool
	// KeepAlive, when KeptAlive, is the last block of a prefix the log
	// shows read past its TTL (prompt.Request.KeepAlive): a fact of the
	// timeline, the same in every schedule. The provider revives that
	// entry, and those of the call's breakpoints inside it, as the
	// observed replay did (provider.Revive); a schedule whose
	// breakpoints reach it reads it.
	KeepAlive int
	KeptAlive bool
	// ReadTokens and ReadInside are the bill's read when it ended inside
	// a floor block (prompt.Request.ReadInside): served that much, the
	// rest written again, in every schedule that does not keep the block
	// alive itself (provider.ObservedStep).
	ReadTokens int
	ReadInside bool
	// Window is the context window the request asked for
	// (prompt.Request.Window: the 1M-context option).
	Window int
	// Started, when positive, is when the response began after the
	// request, as the log showed it (prompt.Request.Started): what the
	// call writes is readable, and its TTL runs, from then, in every
	// schedule, as in the run that taped it.
	Started time.Duration
	// Policy is the breakpoints the policy marked, sorted by block.
	Policy []prompt.Breakpoint
	// Fixed marks a request the caller does not control and does not pay
	// for (the engine's prewarm, standing for another session's call): it
	// is replayed as sent and left out of every cost.
	Fixed bool
}

// A Tape is a provider that records what it forwards: the sequence of
// requests a run sent, for Solve. Only accepted requests are taped (a
// rejected one is not billed, whatever its breakpoints). A request with no
// Key is taped Fixed: the engine sends one only to prewarm an account's
// shared floor, a call the session did not make.
type Tape struct {
	Inner provider.Provider
	Calls []Call
	// arena holds the blocks of the last call; a call that extends it
	// appends in place, so taping a growing conversation copies each block
	// once.
	arena []Block
}

// Name implements provider.Provider.
func (t *Tape) Name() string { return t.Inner.Name() }

// Release implements provider.Releaser: it releases Inner; the calls
// taped stay.
func (t *Tape) Release() { provider.Release(t.Inner) }

// Send implements provider.Provider.
func (t *Tape) Send(now time.Time, req *prompt.Request) (provider.Response, error) {
	resp, err := t.Inner.Send(now, req)
	if err != nil {
		return resp, err
	}
	bps := slices.Clone(req.Breakpoints)
	sort.SliceStable(bps, func(i, j int) bool { return bps[i].Block < bps[j].Block })
	t.Calls = append(t.Calls, Call{
		Time: now, Key: req.Key, Model: req.Model, Blocks: t.blocks(req.Blocks),
		Total: req.Total, Output: req.Output, Policy: bps, Fixed: req.Key == "",
		ReadLimit: req.ReadLimit, Limited: req.Limited, Window: req.Window, Started: req.Started,
		KeepAlive: req.KeepAlive, KeptAlive: req.KeptAlive && req.KeepAlive < len(req.Blocks),
		ReadTokens: req.ReadTokens, ReadInside: req.ReadInside,
	})
	return resp, nil
}

// blocks returns the cache's view of bs, sharing the arena's storage with
// earlier calls for the common prefix: the blocks whose chain and end
// both match. A chain is a hash of content only: two sessions of one
// account sized apart (a floor each calibrates to its own bill) send the
// same chains with other ends, and a call must keep its own.
func (t *Tape) blocks(bs []prompt.Block) []Block {
	// Chains are prefix hashes: equal at i means equal before i, so the
	// common chain prefix is found by binary search; ends are checked
	// within it.
	n := sort.Search(min(len(bs), len(t.arena)), func(i int) bool { return bs[i].Chain != t.arena[i].Chain })
	for i := range n {
		if bs[i].End != t.arena[i].End {
			n = i
			break
		}
	}
	if n < len(t.arena) {
		// A divergence: earlier calls keep the old array.
		t.arena = slices.Clip(t.arena[:n])
	}
	for i := n; i < len(bs); i++ {
		t.arena = append(t.arena, Block{Chain: bs[i].Chain, End: bs[i].End, Cacheable: bs[i].Cacheable})
	}
	return t.arena[:len(bs):len(bs)]
}

// readLimit is the last block the provider may serve for c.
func (c *Call) readLimit() int {
	if c.Limited {
		return c.ReadLimit
	}
	return len(c.Blocks)
}

// keep is the block c's observed read past the TTL revives, or -1
// (provider.Anthropic.Send revives only a block of the prompt).
func (c *Call) keep() int {
	if c.KeptAlive && c.KeepAlive >= 0 && c.KeepAlive < len(c.Blocks) {
		return c.KeepAlive
	}
	return -1
}

// fixedSchedule is what every schedule sends a Fixed call with: its
// breakpoints on the 1h tier. A Fixed call stands for another session's
// request (the engine's prewarm of the shared floor, sent with the
// session's TTL), which a policy with the 1h tier would have sent so, at
// no cost to this one; the policy's own schedule keeps it as taped.
func (c *Call) fixedSchedule() []prompt.Breakpoint {
	out := slices.Clone(c.Policy)
	for j := range out {
		out[j].TTL = prompt.TTL1h
	}
	return out
}

// anchor is the last block c's observed read past the TTL leaves readable
// whole in every schedule: keep, or the block before it when the bill's
// read ended inside it (ReadInside), which a schedule that did not keep
// it alive itself reads only in part (provider.ObservedStep). The search
// anchors on it; the bound, which must stay below every bill, on keep.
func (c *Call) anchor() int {
	k := c.keep()
	if k >= 0 && c.ReadInside && !c.Limited {
		k--
	}
	return k
}

package provider

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// A prefixIndex is the set of cached prompt prefixes of an implicitly
// caching provider (OpenAI, DeepSeek's seen-prefix set, vLLM), at block
// granularity: the prefix through block i is cached iff the hash chain of
// block i is. A block is a run of tokens; two blocks with the same hash are
// taken to hold the same tokens, and two that differ to differ from their
// first token. Real caches match to the first differing token, so the index
// under-counts a hit by the leading tokens a changed block shares with its
// old version (a rewritten tool result that keeps its first line, say).
//
// Prefixes are stored as runs: a run is the boundaries one request added,
// extended in place by the next request that continues it, so a growing
// conversation is one run and work per call is proportional to the blocks
// added. A request that diverges forks a child run. Liveness (TTL, LRU) is
// per run; a run is reachable only while its ancestors are.
type prefixIndex struct {
	m       map[uint64]loc
	sweepAt int
}

type loc struct {
	r *run
	i int
}

type run struct {
	parent *run
	fork   int // boundaries of parent shared with this run
	ends   []int
	ready  []time.Time
	// kept is how many boundaries are still cached (vLLM evicts a run from
	// its tail).
	kept     int
	children int
	expires  time.Time // zero: no TTL
	dead     bool
	// tokens is the KV tokens this run holds (vLLM); lru its place in the
	// LRU list.
	tokens int
	lru    any
}

func newPrefixIndex() *prefixIndex { return &prefixIndex{m: map[uint64]loc{}, sweepAt: 256} }

func (r *run) alive(now time.Time) bool {
	return !r.dead && (r.expires.IsZero() || now.Before(r.expires))
}

// reachable reports whether the boundary at l is cached and, unless
// pending is set, readable now (pending also accepts prefixes still being
// written by a request whose response has not started).
func (l loc) reachable(now time.Time, pending bool) bool {
	r, i := l.r, l.i
	if i >= r.kept || (!pending && now.Before(r.ready[i])) {
		return false
	}
	for ; r != nil; r = r.parent {
		if !r.alive(now) || (r.parent != nil && r.fork > r.parent.kept) {
			return false
		}
	}
	return true
}

// longest returns the index of the last block of req whose prefix is cached
// and readable now (or, with pending, cached or being written), or -1, with
// its location. Cached prefixes are prefix-closed and readiness only grows
// along a prefix, so a binary search over the blocks finds it.
func (x *prefixIndex) longest(now time.Time, req *prompt.Request, pending bool) (int, loc) {
	lo, hi := 0, len(req.Blocks) // invariant: blocks < lo hit, blocks >= hi miss
	var best loc
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if l, ok := x.m[req.Blocks[mid].Chain]; ok && l.reachable(now, pending) {
			lo, best = mid+1, l
		} else {
			hi = mid
		}
	}
	return lo - 1, best
}

// insert caches the prefixes of req past block hit (found at l), readable
// from ready. It extends l's run when the request continues it, else forks
// a new run. It returns the run holding the request's last block.
func (x *prefixIndex) insert(req *prompt.Request, hit int, l loc, ready time.Time) *run {
	if hit == len(req.Blocks)-1 {
		return l.r
	}
	var r *run
	if hit >= 0 && l.i == len(l.r.ends)-1 && l.i == l.r.kept-1 && l.r.children == 0 {
		r = l.r
	} else {
		r = &run{}
		if hit >= 0 {
			r.parent, r.fork = l.r, l.i+1
			l.r.children++
		}
	}
	for i := hit + 1; i < len(req.Blocks); i++ {
		b := &req.Blocks[i]
		x.m[b.Chain] = loc{r, len(r.ends)}
		r.ends = append(r.ends, b.End)
		r.ready = append(r.ready, ready)
	}
	r.kept = len(r.ends)
	return r
}

// touch applies f to r and its ancestors (refreshing a TTL, say).
func touch(r *run, f func(*run)) {
	for ; r != nil; r = r.parent {
		f(r)
	}
}

// sweep drops index entries of dead or evicted boundaries once the map has
// doubled since the last sweep: amortized O(1) per insert.
func (x *prefixIndex) sweep(now time.Time) {
	if len(x.m) < x.sweepAt {
		return
	}
	for k, l := range x.m {
		if l.i >= l.r.kept || !l.r.alive(now) {
			delete(x.m, k)
		}
	}
	x.sweepAt = max(256, 2*len(x.m))
}

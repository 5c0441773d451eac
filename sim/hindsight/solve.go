package hindsight

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Options are the provider's billing rules: the same rate card and latency
// the fake Anthropic provider was given.
type Options struct {
	// Prices gives each model's rates and minimum cacheable length; nil
	// means pricing.Default().
	Prices *pricing.Card
	// Latency overrides provider.DefaultLatency("anthropic", model), as
	// provider.Common.Latency does. TTFT decides when an entry becomes
	// readable and when it expires.
	Latency *provider.Latency
	// Beam caps the search states kept after a call (0: DefaultBeam). A
	// capped search is still a feasible schedule; only its optimality
	// is lost, and the bound says by how much at most.
	Beam int
	// FullChoices is the most candidate positions (live entries plus
	// future-shared boundaries) a call may have for the search to try
	// every subset of them (0: DefaultFullChoices). Past it, a call tries
	// the positions some later call shares up to (see Solve).
	FullChoices int
	// MaxLayerEntries bounds the cache entries the candidate states of one
	// call may hold together (0: DefaultMaxLayerEntries), and so the
	// search's memory: past it the call's states are cut to the Beam
	// best before it tries more (Result.Capped counts such calls). A cut
	// search is still a feasible schedule, not proven optimal; the bound
	// says by how much at most.
	MaxLayerEntries int
	// Progress, when set, hears how many of the calls (a prefix of them)
	// are solved, after each piece Solve cuts the tape into (a progress
	// line). It changes nothing Solve returns, and no key or memo
	// compares it.
	Progress func(calls int)
	// Crew, when set, lends Solve helpers for its independent pieces
	// (nil: it solves them one after the other). It changes nothing
	// Solve returns, and no key or memo compares it.
	Crew *Crew

	noBound bool // a conversation's solve for perKeySearch: its schedule only
}

// Defaults of Options.
const (
	DefaultBeam        = 32
	DefaultFullChoices = 6
	// DefaultMaxLayerEntries keeps a call's candidate states near 28 MiB
	// (an entry is 56 bytes; the search holds three such arrays); the
	// training corpus needs at most 15K (docs/performance.md).
	DefaultMaxLayerEntries = 1 << 19
)

// A Result is the hindsight optimum of a tape: the cheapest schedule found,
// what it bills, and a proven lower bound on every schedule's bill.
type Result struct {
	// CostUSD is what Schedule bills, replayed through the fake provider,
	// over the calls that are not Fixed.
	CostUSD float64
	// BoundUSD is a lower bound on the bill of any schedule (Bound); when
	// it equals CostUSD, Schedule is optimal.
	BoundUSD float64
	// Exact reports that Schedule is proven optimal: the search tried
	// every relevant choice without capping, or the bound meets the cost.
	Exact bool
	// Schedule is the breakpoints of each call, sorted by block; Usage and
	// Cost what each call billed under it (0 for Fixed calls).
	Schedule [][]prompt.Breakpoint
	Usage    []traces.Usage
	Cost     []float64
	// PolicyUSD is what the policy's own schedule bills on the tape: the
	// run's bill for the same requests at the same times.
	PolicyUSD float64
	// PolicyUsage and PolicyCost are that bill per call.
	PolicyUsage []traces.Usage
	PolicyCost  []float64
	// Source says where Schedule came from: "search", or the policy
	// schedule variant that beat a capped search ("policy", "policy-5m",
	// "policy-1h", "none").
	Source string
	// SearchUSD is what the search's own schedule bills (CostUSD unless a
	// policy variant beat it).
	SearchUSD float64
	// Capped is how many calls' candidate states were cut to the beam
	// to keep the search within Options.MaxLayerEntries (0: none).
	Capped int

	// cands are the schedules tried, each replayed (for Separate).
	cands []cand
	// peak is the most entries a call's candidate states held together
	// (what MaxLayerEntries bounds), for tests and benchmarks.
	peak int
	// skipped is how many choices the searches did not step, their
	// outcome a sibling's (repeated), for tests.
	skipped int
}

// A cand is one schedule of the tape, replayed.
type cand struct {
	name  string
	sch   [][]prompt.Breakpoint
	usage []traces.Usage
	cost  []float64
}

// GapUSD is how far Schedule may be from the optimum at most.
func (r *Result) GapUSD() float64 { return max(0, r.CostUSD-r.BoundUSD) }

// KeyCost sums per-call costs by call key, for the calls whose key keep
// accepts.
func KeyCost(calls []Call, cost []float64, keep func(key string) bool) float64 {
	s := 0.0
	for i := range calls {
		if !calls[i].Fixed && keep(calls[i].Key) {
			s += cost[i]
		}
	}
	return s
}

// rules is one model's billing rules.
type rules struct {
	price pricing.Price
	lat   provider.Latency
}

func (o *Options) rules(model string) (rules, error) {
	if o.Prices == nil {
		o.Prices = pricing.Default()
	}
	p, err := o.Prices.Lookup(model)
	if err != nil {
		return rules{}, err
	}
	if p.CacheWrite5m < p.Input || p.CacheWrite1h < p.CacheWrite5m || p.CacheRead > p.Input {
		// The search drops writes nobody reads and the bound prices a
		// token at its cheapest class; both assume read ≤ input ≤ 5m write
		// ≤ 1h write, Anthropic's order (reference/providers.md §1.5).
		return rules{}, fmt.Errorf("hindsight: model %s: rates must order read ≤ input ≤ 5m write ≤ 1h write", model)
	}
	lat := provider.DefaultLatency("anthropic", model)
	if o.Latency != nil {
		lat = *o.Latency
	}
	return rules{price: p, lat: lat}, nil
}

// callPrefix is a call's blocks as a provider.Prefix.
type callPrefix []Block

func (p callPrefix) Chain(i int) uint64 { return p[i].Chain }
func (p callPrefix) End(i int) int      { return p[i].End }

// has reports whether c's prompt starts with the prefix whose last block
// is block, with hash chain chain. A chain covers its whole prefix, so the
// prefix is block+1 blocks long in every call that has it.
func (c *Call) has(block int32, chain uint64) bool {
	return int(block) < len(c.Blocks) && c.Blocks[block].Chain == chain
}

// lcp is the number of leading blocks a and b share.
func lcp(a, b *Call) int {
	return sort.Search(min(len(a.Blocks), len(b.Blocks)), func(i int) bool { return a.Blocks[i].Chain != b.Blocks[i].Chain })
}

// ent is one live cache entry of a search state. It holds no pointer, so
// a layer's entries are one flat array the GC never scans, and copying a
// state's entries is a memmove without write barriers: the search makes
// hundreds of candidate states per call. Its times are Unix nanoseconds
// and the index of their zone in solver.zones; with no monotonic reading
// (tapes hold log and seeded times: no time.Now below cmd), that pair is
// exactly what == compares of a time.Time.
type ent struct {
	chain          uint64
	ready, expires int64
	end            int
	model          int32
	block          int32 // its last block (the same index in every call that has it)
	// next is the first later call of the entry's model that has it, as
	// of the call that last pruned it (0: not looked up yet). It is the
	// same in every state holding the entry, so children inherit it
	// instead of scanning the tape again.
	next         int32
	rzone, ezone int32
	ttl          prompt.TTL
}

// A state is the cache after some calls, with the cheapest way found to
// reach it. Its entries and breakpoints are spans of its layer's arrays.
type state struct {
	ents, nents int32 // sorted by (model, chain)
	bps, nbps   int32 // the breakpoints that made it
	cost        float64
	key         uint64
	mask        uint64 // chainBit of every entry's chain
	from        int32  // the trail link of the state it came from (-1: none)
	link        int32  // its own trail link, once it survives its call
	same        int32  // the next state of its layer with the same key (-1: none)
}

// store is the state being stepped through a call (solver.scratch), as
// provider.Entries: (*ents)[:sorted] are sorted by (model, chain); the
// entries the call writes are appended after them. key follows the
// entries' changes (see entHash).
type store struct {
	s      *solver
	ents   *[]ent
	sorted int
	model  int32
	p      callPrefix
	bps    []prompt.Breakpoint
	keep   int // the block an observed read past the TTL revives, or -1
	key    uint64
	mask   uint64 // chainBit of every entry's chain
	last   int    // the entry find found last
}

// find is the index of the entry of chain, or -1. Most lookups miss
// (AnthropicStep's lookback tries every block before a breakpoint): the
// store's mask answers them; one found is remembered for the SetEntry
// that often follows.
func (st *store) find(chain uint64) int {
	if st.mask&chainBit(chain) == 0 {
		return -1
	}
	e := *st.ents
	if k := st.last; k < len(e) && e[k].chain == chain && e[k].model == st.model {
		return k
	}
	lo, hi := 0, st.sorted
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x := &e[m]; x.model < st.model || x.model == st.model && x.chain < chain {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < st.sorted && e[lo].model == st.model && e[lo].chain == chain {
		st.last = lo
		return lo
	}
	for k := st.sorted; k < len(e); k++ {
		if e[k].model == st.model && e[k].chain == chain {
			st.last = k
			return k
		}
	}
	return -1
}

// chainBit is an entry's bit in a mask of the chains of a set of
// entries (a one-word Bloom filter: a bit not set rules the chain out).
func chainBit(chain uint64) uint64 { return 1 << (chain >> 58) }

func (st *store) Entry(chain uint64) (provider.Entry, bool) {
	k := st.find(chain)
	if k < 0 {
		return provider.Entry{}, false
	}
	x := &(*st.ents)[k]
	return provider.Entry{Ready: st.s.time(x.ready, x.rzone), Expires: st.s.time(x.expires, x.ezone), TTL: x.ttl}, true
}

func (st *store) SetEntry(chain uint64, e provider.Entry) {
	if k := st.find(chain); k >= 0 {
		if k < st.sorted {
			st.s.touched = append(st.s.touched, int32(k))
		}
		x := &(*st.ents)[k]
		st.key -= entHash(x)
		st.s.set(x, e)
		st.key += entHash(x)
		return
	}
	block := -1
	for _, bp := range st.bps {
		if st.p[bp.Block].Chain == chain {
			block = bp.Block
			break
		}
	}
	if block < 0 && st.keep >= 0 && st.p[st.keep].Chain == chain {
		block = st.keep
	}
	if block < 0 {
		// AnthropicStep writes only at breakpoints, Revive there and at
		// the observed block.
		panic("hindsight: an entry written off the breakpoints")
	}
	x := ent{model: st.model, block: int32(block), chain: chain, end: st.p[block].End}
	st.s.set(&x, e)
	st.key += entHash(&x)
	st.mask |= chainBit(chain)
	*st.ents = append(*st.ents, x)
}

// set stores e's times and tier in x. (The provider's sub-prefix mark
// stays unset: store does not implement provider.SubPrefixes.)
func (s *solver) set(x *ent, e provider.Entry) {
	x.ready, x.rzone = e.Ready.UnixNano(), s.zone(e.Ready)
	x.expires, x.ezone = e.Expires.UnixNano(), s.zone(e.Expires)
	x.ttl = e.TTL
}

// zone is the index of t's location in s.zones, added if new.
func (s *solver) zone(t time.Time) int32 {
	loc := t.Location()
	for k, z := range s.zones {
		if z == loc {
			return int32(k)
		}
	}
	s.zones = append(s.zones, loc)
	return int32(len(s.zones) - 1)
}

// time is the time.Time of Unix nanoseconds ns in zone z, as it was stored
// (In(time.UTC) restores UTC's nil location, as time.Parse leaves it).
func (s *solver) time(ns int64, z int32) time.Time { return time.Unix(0, ns).In(s.zones[z]) }

// solver holds a tape's precomputed facts.
type solver struct {
	calls  []Call
	opts   Options
	models []string
	model  []int32 // model index of each call
	rules  []rules // by model index
	cov    []int   // last cacheable block with End ≥ the minimum, or -1
	// minAfter[i] is the earliest send time of calls i and later: calls
	// are in send order, but the engine sends a prewarm a little before
	// the session it warms, which may be before another session's call.
	minAfter []int64
	// nextOwn[i] is the next call of call i's conversation (key), or 0.
	nextOwn []int
	// zones are the locations of the entries' times (those of the
	// calls' times, which AnthropicStep's arithmetic keeps).
	zones []*time.Location
	// store is the state being stepped, as AnthropicStep sees it.
	store store
	// peak and skipped are Result's.
	peak, skipped int
	*buffers
}

// buffers are the search's arrays, reused by every candidate state and,
// through a pool, by the next Solve: a whatif solves a tape per policy,
// and fresh arrays cost page faults and GC work each time.
type buffers struct {
	// cur and next are the states after the previous call and this one.
	cur, next layer
	trail     trail
	// scratch is the state being stepped, bps the breakpoints being
	// tried; live, ws, anchors and writes are a state's live entries,
	// writes, anchor sets and write sets.
	scratch           []ent
	bps               []prompt.Breakpoint
	live, readers, ws []int
	anchors, writes   sets
	// nextUse[k] is, for call nextFor-1, the first later call of its model
	// that has its prefix through block k (0: none), if stamp[k] ==
	// nextFor: the entries prune looks up are all in the call's prompt.
	nextUse, stamp []int32
	nextFor        int32
	// order and kept rank a call's states for the beam; spareEnts and
	// spareBps are the arrays a layer cut mid-call moves its kept states
	// to (trim), cappedAt the call last cut.
	order     []ranked
	kept      []state
	spareEnts []ent
	spareBps  []prompt.Breakpoint
	cappedAt  int
	// touched are the indices of the parent's entries the step being
	// pruned changed (pruneNew).
	touched []int32
	// sibs are the outcomes a state's choices on the current call have
	// had (repeated).
	sibs siblings
}

var pool = sync.Pool{New: func() any {
	return &buffers{}
}}

// reset readies b for another tape.
func (b *buffers) reset() {
	b.cur.reset()
	b.next.reset()
	b.trail.links, b.trail.flat = b.trail.links[:0], b.trail.flat[:0]
	clear(b.stamp) // nextFor starts again
	b.nextFor = 0
}

func newSolver(calls []Call, opts Options) (*solver, error) {
	s := &solver{calls: calls, opts: opts, model: make([]int32, len(calls)), cov: make([]int, len(calls))}
	idx := map[string]int32{}
	for i := range calls {
		c := &calls[i]
		m, ok := idx[c.Model]
		if !ok {
			r, err := s.opts.rules(c.Model)
			if err != nil {
				return nil, err
			}
			m = int32(len(s.models))
			idx[c.Model] = m
			s.models = append(s.models, c.Model)
			s.rules = append(s.rules, r)
		}
		s.model[i] = m
		s.cov[i] = -1
		minLen := s.rules[m].price.MinCacheable
		for k := len(c.Blocks) - 1; k >= 0 && c.Blocks[k].End >= minLen; k-- {
			if c.Blocks[k].Cacheable {
				s.cov[i] = k
				break
			}
		}
	}
	s.nextOwn = make([]int, len(calls))
	seen := map[string]int{}
	for i := len(calls) - 1; i >= 0; i-- {
		s.nextOwn[i] = seen[calls[i].Key]
		seen[calls[i].Key] = i
	}
	s.minAfter = make([]int64, len(calls)+1)
	s.minAfter[len(calls)] = math.MaxInt64
	for i := len(calls) - 1; i >= 0; i-- {
		s.minAfter[i] = min(s.minAfter[i+1], calls[i].Time.UnixNano())
	}
	return s, nil
}

// step bills call i with bps (sorted, valid) against s.scratch, whose
// first sorted entries are sorted and whose key is key, updating them; it
// returns the call's cost and the entries' new key.
func (s *solver) step(i int, sorted int, key, mask uint64, bps []prompt.Breakpoint) (float64, uint64) {
	c := &s.calls[i]
	m := s.model[i]
	r := &s.rules[m]
	s.store = store{s: s, ents: &s.scratch, sorted: sorted, model: m, p: c.Blocks, bps: bps, keep: c.keep(), key: key, mask: mask}
	// The observations, as provider.Anthropic.Send applies them: facts of
	// the call, whatever the schedule. A pointer: AnthropicStep boxes its
	// store to look for provider.SubPrefixes, which would allocate a
	// struct each step.
	ob := provider.ObservationOf(len(c.Blocks), c.Limited, c.ReadLimit, c.keep() >= 0, c.KeepAlive, c.ReadTokens, c.ReadInside)
	st, _ := provider.ObservedStep(c.Time, callPrefix(c.Blocks), c.Total, c.Output, bps, ob, r.price.MinCacheable, r.lat.Started(c.Started), &s.store)
	if c.Fixed {
		return 0, s.store.key
	}
	return r.price.Cost(st.Usage), s.store.key
}

// prune drops the entries no later call can touch: those no later call of
// their model contains, and those expired by the first that does (when no
// call after it is sent earlier). Dropping them changes nothing a later
// call sees, so the search stays exact. It keeps the entries' order and
// returns those kept, how many of them were among the first sorted,
// their key and their chains' mask (chainBit).
func (s *solver) prune(i int, ents []ent, sorted int, key uint64) ([]ent, int, uint64, uint64) {
	n, ns, mask := 0, 0, uint64(0)
	for k := range ents {
		x := &ents[k]
		if int(x.next) <= i {
			// The entry is call i's: one it wrote, or one whose next
			// user it is. (nextAfter's memo, looked up here: the
			// candidates of a call ask for the same few blocks.)
			if b := x.block; int(b) < len(s.stamp) && s.stamp[b] == int32(i+1) && s.nextFor == int32(i+1) {
				x.next = s.nextUse[b]
			} else {
				x.next = s.nextAfter(i, int(b))
			}
		}
		if s.gone(x) {
			key -= entHash(x)
			continue
		}
		mask |= chainBit(x.chain)
		if n != k {
			ents[n] = *x
		}
		n++
		if k < sorted {
			ns++
		}
	}
	return ents[:n], ns, key, mask
}

// gone says whether entry x, its next user noted, can serve no later
// call: none contains it, or it expires before the first that does can be
// sent (prune).
func (s *solver) gone(x *ent) bool { return x.next == 0 || s.minAfter[x.next] >= x.expires }

// prepare notes in each entry of state k of l its next user after call i
// (prune's lookup, done once for all the state's children: the same in
// each) and reports whether prune would keep every entry as it is.
func (s *solver) prepare(l *layer, k, i int) bool {
	all := true
	ents := l.entsOf(&l.states[k])
	for j := range ents {
		x := &ents[j]
		if int(x.next) <= i {
			x.next = s.nextAfter(i, int(x.block))
		}
		if s.gone(x) {
			all = false
		}
	}
	return all
}

// pruneNew is prune for a child of a state prepare found clean: the
// parent's entries the step left alone stay (their next users and
// expiries are what prepare checked), so only those it changed
// (s.touched) and those it wrote (after sorted) are looked at. It
// reports false, changing nothing, when a changed entry would go: prune
// then does the whole pass.
func (s *solver) pruneNew(i int, ents []ent, sorted int, key, mask uint64) ([]ent, uint64, uint64, bool) {
	for _, k := range s.touched {
		if s.gone(&ents[k]) {
			return nil, 0, 0, false
		}
	}
	n := sorted
	for k := sorted; k < len(ents); k++ {
		x := &ents[k]
		if int(x.next) <= i {
			x.next = s.nextAfter(i, int(x.block))
		}
		if s.gone(x) {
			key -= entHash(x)
			continue
		}
		mask |= chainBit(x.chain)
		if n != k {
			ents[n] = *x
		}
		n++
	}
	return ents[:n], key, mask, true
}

// nextAfter is the first call after i of its model whose prompt has call
// i's prefix through block k, or 0.
func (s *solver) nextAfter(i, k int) int32 {
	if s.nextFor != int32(i+1) {
		s.nextFor = int32(i + 1)
		if n := len(s.calls[i].Blocks); len(s.stamp) < n {
			s.stamp = make([]int32, n)
			s.nextUse = make([]int32, n)
		}
	}
	if s.stamp[k] == s.nextFor {
		return s.nextUse[k]
	}
	c := &s.calls[i]
	next := int32(0)
	for j := i + 1; j < len(s.calls); j++ {
		if s.model[j] == s.model[i] && s.calls[j].has(int32(k), c.Blocks[k].Chain) {
			next = int32(j)
			break
		}
	}
	s.stamp[k], s.nextUse[k] = s.nextFor, next
	return next
}

// sortTail sorts ents by (model, chain), its first n sorted already: the
// rest are the few a call wrote.
func sortTail(ents []ent, n int) {
	for k := n; k < len(ents); k++ {
		x := ents[k]
		lo, hi := 0, k
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if y := &ents[m]; y.model < x.model || y.model == x.model && y.chain < x.chain {
				lo = m + 1
			} else {
				hi = m
			}
		}
		copy(ents[lo+1:k+1], ents[lo:k])
		ents[lo] = x
	}
}

// entHash is an entry's share of its state's key, the sum of its
// entries' shares: equal states (sameEnts) have equal keys whatever their
// order, and a call's changes update its parent's key in O(1) each.
func entHash(x *ent) uint64 {
	h := mix64(x.chain ^ uint64(x.model)<<32 ^ uint64(uint32(x.block)))
	return mix64(h ^ uint64(x.ready)*0x9e3779b97f4a7c15 ^ uint64(x.expires)*0xc2b2ae3d27d4eb4f ^ uint64(x.ttl))
}

// mix64 is MurmurHash3's 64-bit finalizer.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// sameEnts reports whether a and b are the same cache: the provider keeps
// an entry's times and tier by prefix chain (end and next are the
// search's notes on the prefix).
func sameEnts(a, b []ent) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		x, y := &a[k], &b[k]
		if x.chain != y.chain || x.expires != y.expires || x.ready != y.ready || x.model != y.model || x.block != y.block ||
			x.ttl != y.ttl || x.rzone != y.rzone || x.ezone != y.ezone {
			return false
		}
	}
	return true
}

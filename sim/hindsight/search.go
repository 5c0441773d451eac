package hindsight

import (
	"cmp"
	"slices"
	"sort"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// Solve returns the cheapest schedule it finds for calls (in send order) and
// a lower bound on every schedule's bill.
//
// The search is a dynamic program over cache states: after each call, the
// set of entries some later call could still touch (a later call of the
// same model has the prefix, and the entry outlives the first that does),
// with their exact ready and expiry times; equal states merge, keeping the
// cheaper way to reach them. Each call is billed by provider.AnthropicStep,
// the fake provider's own rules, so a state is exactly what the provider
// would hold.
//
// A call's choices are canonical: breakpoints on live entries (anchors: they
// read and refresh them, and cost nothing) plus writes on boundaries some
// later call shares, 1h ones before 5m ones. Nothing is lost: a breakpoint
// that writes a prefix no later call has only adds write premium over
// input, and one that writes nothing acts only through the entry its
// lookback finds, which an anchor on that entry does the same. When a call
// has at most FullChoices candidate positions every subset is tried, and a
// search that never met the Beam cap is exact. Otherwise the call tries the
// top live entry (alone or with one other) and, for writes, only the
// longest boundary each later call shares with it (a write between two such
// boundaries serves the same later calls as the upper one and reads fewer
// tokens); that restriction and the Beam cap can miss the optimum, which is
// why Bound is computed too.
func Solve(calls []Call, opts Options) (*Result, error) {
	s, err := newSolver(calls, opts)
	if err != nil {
		return nil, err
	}
	beam := cmp.Or(opts.Beam, DefaultBeam)
	full := cmp.Or(opts.FullChoices, DefaultFullChoices)
	exact := true
	shares, aheads := s.shares(), s.aheads()
	frontier := []*state{{}}
	index := map[uint64][]int{}
	var next []*state
	for i := range calls {
		c := &calls[i]
		next = next[:0]
		clear(index)
		add := func(st *state) {
			for _, j := range index[st.key] {
				if o := next[j]; sameEnts(o.ents, st.ents) {
					if st.cost < o.cost {
						next[j] = st
					}
					return
				}
			}
			index[st.key] = append(index[st.key], len(next))
			next = append(next, st)
		}
		if c.Fixed {
			for _, st := range frontier {
				add(s.apply(st, i, c.Policy))
			}
		} else {
			wFull, nFull := s.futureShared(i, full)
			wSome := s.tops(i, shares[i])
			for _, st := range frontier {
				live := s.live(st, i)
				var ws []int
				var as [][]int
				if nFull+len(live) <= full && len(frontier) <= fullStates {
					ws, as = wFull, subsets(live, prompt.MaxBreakpoints)
				} else {
					exact = false
					ws, as = wSome, topAnchors(live, wSome)
				}
				ws = slices.DeleteFunc(slices.Clone(ws), func(k int) bool { return slices.Contains(live, k) })
				for _, a := range as {
					top := -1
					if len(a) > 0 {
						top = a[len(a)-1]
					}
					// A breakpoint below an anchor writes nothing.
					above := ws[sort.SearchInts(ws, top+1):]
					for _, w := range subsets(above, prompt.MaxBreakpoints-len(a)) {
						for split := 0; split <= len(w); split++ {
							add(s.apply(st, i, marks(a, w, split)))
							if len(w) == 0 {
								break
							}
						}
					}
				}
			}
		}
		if len(next) > beam {
			// Rank by cost so far plus what the next call of each
			// conversation would pay for the part of its prompt the state
			// cannot serve: a pure cost-so-far ranking keeps the states
			// that skipped writes.
			ahead := aheads[i]
			for _, st := range next {
				st.rank = st.cost
				for _, j := range ahead {
					st.rank += s.deficit(st, j)
				}
			}
			// Among equals, the state holding more entries keeps more
			// options (a floor entry kept alive by a free anchor or write).
			slices.SortStableFunc(next, func(a, b *state) int {
				return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(len(b.ents), len(a.ents)))
			})
			next = next[:beam]
			exact = false
		}
		frontier, next = append(frontier[:0:0], next...), frontier
	}
	best := frontier[0]
	for _, st := range frontier[1:] {
		if st.cost < best.cost {
			best = st
		}
	}
	res := &Result{Schedule: make([][]prompt.Breakpoint, len(calls)), Source: "search"}
	for i, st := len(calls)-1, best; i >= 0; i, st = i-1, st.parent {
		res.Schedule[i] = st.bps
	}
	return s.finish(res, exact)
}

// fullStates is the most states for which a call with few candidates
// tries every subset of them.
const fullStates = 256

// maxAhead caps the conversations whose next calls rank a state.
const maxAhead = 16

// aheads returns, for each call i, the next call of each conversation
// under way at i (started at or before i, not over), nearest first: the
// calls whose deficits rank a state. Every conversation counts, not only
// the one that sends next: a session waiting on a subagent's burst of
// calls needs its entry to outlive the burst.
func (s *solver) aheads() [][]int {
	first := map[string]int{}
	for i := len(s.calls) - 1; i >= 0; i-- {
		first[s.calls[i].Key] = i
	}
	out := make([][]int, len(s.calls))
	next := map[string]int{}
	var keys []string // keys with a call after i, in first-seen order
	for i := len(s.calls) - 1; i >= 0; i-- {
		var a []int
		for _, k := range keys {
			if first[k] <= i {
				a = append(a, next[k])
			}
		}
		slices.Sort(a)
		if len(a) > maxAhead {
			a = a[:maxAhead]
		}
		out[i] = a
		k := s.calls[i].Key
		if _, ok := next[k]; !ok {
			keys = append(keys, k)
		}
		next[k] = i
	}
	return out
}

// deficit is what call j (if any) pays at least, beyond reading, for the
// part of its cacheable prefix no entry of st live then can serve.
func (s *solver) deficit(st *state, j int) float64 {
	if j >= len(s.calls) || s.cov[j] < 0 || s.calls[j].Fixed {
		return 0
	}
	c := &s.calls[j]
	served := 0
	limit := c.readLimit()
	for _, x := range st.ents {
		if x.model == s.model[j] && int(x.block) <= limit && c.has(x.block, x.chain) && !c.Time.Before(x.e.Ready) && c.Time.Before(x.e.Expires) {
			served = max(served, x.end)
		}
	}
	p := &s.rules[s.model[j]].price
	return float64(c.Blocks[s.cov[j]].End-served) * (p.Input - p.CacheRead) / 1e6
}

// marks is the breakpoints of anchors a (1h: they write nothing, and 1h
// keeps the order valid whatever follows) and writes w, 1h below split.
func marks(a, w []int, split int) []prompt.Breakpoint {
	bps := make([]prompt.Breakpoint, 0, len(a)+len(w))
	for _, k := range a {
		bps = append(bps, prompt.Breakpoint{Block: k, TTL: prompt.TTL1h})
	}
	for j, k := range w {
		ttl := prompt.TTL5m
		if j < split {
			ttl = prompt.TTL1h
		}
		bps = append(bps, prompt.Breakpoint{Block: k, TTL: ttl})
	}
	slices.SortFunc(bps, func(x, y prompt.Breakpoint) int { return x.Block - y.Block })
	return bps
}

// apply is st after call i with breakpoints bps.
func (s *solver) apply(st *state, i int, bps []prompt.Breakpoint) *state {
	ents := append(make([]ent, 0, len(st.ents)+len(bps)), st.ents...)
	u, c := s.step(i, &ents, bps)
	ents = s.prune(i, ents)
	slices.SortFunc(ents, cmpEnt)
	ch := &state{ents: ents, cost: st.cost + c, parent: st, bps: bps, usage: u, callC: c}
	ch.key = ch.hash()
	return ch
}

// live is the blocks of call i that hold an entry of st it can read now.
func (s *solver) live(st *state, i int) []int {
	c := &s.calls[i]
	limit := c.readLimit()
	var out []int
	for _, x := range st.ents {
		if x.model == s.model[i] && int(x.block) <= limit && c.has(x.block, x.chain) && !c.Time.Before(x.e.Ready) && c.Time.Before(x.e.Expires) {
			out = append(out, int(x.block))
		}
	}
	slices.Sort(out)
	return out
}

// futureShared returns the cacheable boundaries of call i past the minimum
// length that some later call of its model shares, when there are at most
// limit of them, and how many there are (limit+1 meaning more).
func (s *solver) futureShared(i, limit int) ([]int, int) {
	c := &s.calls[i]
	share := 0
	for j := i + 1; j < len(s.calls) && share < len(c.Blocks); j++ {
		if s.model[j] == s.model[i] {
			share = max(share, lcp(c, &s.calls[j]))
		}
	}
	minLen := s.rules[s.model[i]].price.MinCacheable
	var out []int
	for k := min(share-1, s.cov[i]); k >= 0 && c.Blocks[k].End >= minLen; k-- {
		if c.Blocks[k].Cacheable {
			if len(out) == limit {
				return nil, limit + 1
			}
			out = append(out, k)
		}
	}
	slices.Reverse(out)
	return out, len(out)
}

// maxTops caps the write positions a call with many choices tries, and
// nearCalls is how many next calls' shared prefixes are measured directly.
const (
	maxTops   = 3
	nearCalls = 8
)

// shares returns, for each call, the lengths (in blocks) of the prefixes it
// shares with later calls, largest first, at most maxTops of them: the
// two largest (the next calls) and the smallest (a floor a compaction
// keeps). The next nearCalls and the conversation's own next call are
// measured; further ones through the call after: lcp(i, j) ≥ min(lcp(i, i+1), lcp(i+1, j)), with equality when the
// two differ, so one backward pass is linear in calls.
func (s *solver) shares() [][]int {
	out := make([][]int, len(s.calls))
	for i := len(s.calls) - 2; i >= 0; i-- {
		c := &s.calls[i]
		var set []int
		addLen := func(n int) {
			if n > 0 && !slices.Contains(set, n) {
				set = append(set, n)
			}
		}
		for j := i + 1; j < len(s.calls) && j <= i+nearCalls; j++ {
			addLen(lcp(c, &s.calls[j]))
		}
		if j := s.nextOwn[i]; j > 0 {
			// The conversation's own next call, however many calls of
			// its subagents come first.
			addLen(lcp(c, &s.calls[j]))
		}
		next := lcp(c, &s.calls[i+1])
		for _, n := range out[i+1] {
			addLen(min(next, n))
		}
		slices.SortFunc(set, func(a, b int) int { return b - a })
		if len(set) > maxTops {
			set = append(set[:maxTops-1], set[len(set)-1])
		}
		out[i] = set
	}
	return out
}

// tops maps call i's shared prefix lengths to the last cacheable boundary
// at or past the minimum length within each: its write positions, sorted.
func (s *solver) tops(i int, shares []int) []int {
	c := &s.calls[i]
	minLen := s.rules[s.model[i]].price.MinCacheable
	var out []int
	for _, n := range shares {
		k := min(n-1, s.cov[i])
		for ; k >= 0 && !c.Blocks[k].Cacheable; k-- {
		}
		if k >= 0 && c.Blocks[k].End >= minLen && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// subsets returns the subsets of xs with at most n elements, each sorted,
// the empty set first.
func subsets(xs []int, n int) [][]int {
	out := [][]int{nil}
	for _, x := range xs {
		for _, s := range out {
			if len(s) < n {
				out = append(out, append(slices.Clip(s), x))
			}
		}
	}
	return out
}

// topAnchors is the anchor sets a call with many choices tries: none, the
// top live entry, and the top with one other at a position some later
// call shares up to (refreshing it for that call).
func topAnchors(live, tops []int) [][]int {
	out := [][]int{nil}
	if len(live) == 0 {
		return out
	}
	top := live[len(live)-1]
	out = append(out, []int{top})
	for _, k := range live[:len(live)-1] {
		if slices.Contains(tops, k) {
			out = append(out, []int{k, top})
		}
	}
	return out
}

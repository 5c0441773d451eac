package hindsight

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
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
// why Bound is computed too. It stops, with ctx's error, when ctx is done.
//
// A tape whose calls pause for longer than any entry can live (an hour
// past the slowest response before the pause) is solved piece by piece
// (segments): nothing cached before such a pause is alive after it, in
// any schedule, so the pieces' optima add up to the tape's, and each
// piece gets the search's whole beam.
func Solve(ctx context.Context, calls []Call, opts Options) (*Result, error) {
	cuts, err := segments(calls, opts)
	if err != nil {
		return nil, err
	}
	segs := make([]*segment, len(cuts))
	var jobs []job
	for k, from := range cuts {
		to := len(calls)
		if k+1 < len(cuts) {
			to = cuts[k+1]
		}
		s, err := newSolver(calls[from:to], opts)
		if err != nil {
			return nil, err
		}
		g := &segment{s: s, to: to, keys: s.keyList()}
		segs[k] = g
		if len(g.keys) < manyKeys {
			jobs = append(jobs, job{g, -1, to - from})
		}
		if len(g.keys) >= 2 {
			g.alone = make([]alone, len(g.keys))
			for n := range g.keys {
				jobs = append(jobs, job{g, n, 0})
			}
		}
	}
	for k := range jobs {
		if j := &jobs[k]; j.key >= 0 {
			j.size = j.seg.split(j.key)
		}
	}
	// The searches first, the largest first, so that the last to start
	// are short; then each segment's replays and bound.
	slices.SortStableFunc(jobs, func(a, b job) int { return b.size - a.size })
	opts.Crew.each(len(jobs), func(k int) {
		if ctx.Err() == nil {
			jobs[k].run(ctx)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	told := 0 // the segments whose calls Progress heard of
	opts.Crew.each(len(segs), func(k int) {
		g := segs[k]
		if ctx.Err() != nil {
			return
		}
		g.res, g.err = g.s.finish(ctx, g)
		if opts.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		g.done = true
		n := told
		for told < len(segs) && segs[told].done && segs[told].err == nil {
			told++
		}
		if told > n {
			opts.Progress(segs[told-1].to)
		}
	})
	parts := make([]*Result, len(segs))
	for k, g := range segs {
		if g.err != nil {
			return nil, g.err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		parts[k] = g.res
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return join(parts), nil
}

// A segment is a piece of the tape Solve solves alone (segments): its
// joint search's result, each conversation's own schedule (perKeySearch),
// then the result of both.
type segment struct {
	s     *solver
	to    int      // the tape's index past its last call
	keys  []string // its conversations, in the order they start
	joint *Result  // the joint search's schedule (nil: none ran)
	exact bool     // the joint search tried every relevant choice
	alone []alone  // by key, with two keys or more
	res   *Result
	err   error
	done  bool
}

// alone is one conversation's calls, solved alone.
type alone struct {
	at      []int // the calls' indices in the segment
	sch     [][]prompt.Breakpoint
	capped  int
	peak    int
	skipped int
	err     error
}

// split sets the calls of the segment's key n, and returns how many.
func (g *segment) split(n int) int {
	calls := g.s.calls
	for i := range calls {
		if calls[i].Key == g.keys[n] {
			g.alone[n].at = append(g.alone[n].at, i)
		}
	}
	return len(g.alone[n].at)
}

// A job is one search of a segment: the joint one (key −1) or one
// conversation's alone.
type job struct {
	seg  *segment
	key  int
	size int // calls, to run the large jobs first
}

func (j job) run(ctx context.Context) {
	g := j.seg
	if j.key < 0 {
		g.joint, g.exact, g.err = g.s.search(ctx)
		return
	}
	a := &g.alone[j.key]
	sub := make([]Call, len(a.at))
	for k, i := range a.at {
		sub[k] = g.s.calls[i]
	}
	opts := g.s.opts
	opts.Progress = nil // a conversation's calls are not a prefix of the tape
	opts.noBound = true // only the schedule is used
	r, err := Solve(ctx, sub, opts)
	if err != nil {
		a.err = err
		return
	}
	a.sch, a.capped, a.peak, a.skipped = r.Schedule, r.Capped, r.peak, r.skipped
}

// search is the joint search of the solver's calls (Solve's dynamic
// program), and whether it was exhaustive.
func (s *solver) search(ctx context.Context) (*Result, bool, error) {
	calls, opts := s.calls, s.opts
	beam := cmp.Or(opts.Beam, DefaultBeam)
	full := cmp.Or(opts.FullChoices, DefaultFullChoices)
	maxEnts := cmp.Or(opts.MaxLayerEntries, DefaultMaxLayerEntries)
	exact, capped := true, 0
	shares, aheads := s.shares(), s.aheads()
	s.buffers = pool.Get().(*buffers)
	defer pool.Put(s.buffers)
	s.reset()
	cur, next, tr := &s.cur, &s.next, &s.trail
	cur.states = append(cur.states, state{from: -1, link: -1, same: -1}) // the empty cache, key 0
	for i := range calls {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		c := &calls[i]
		next.reset()
		if c.Fixed {
			fixed := c.fixedSchedule()
			for k := range cur.states {
				s.add(next, cur, k, i, fixed, s.prepare(cur, k, i))
			}
		} else {
			wFull, nFull := s.futureShared(i, full)
			wSome := s.tops(i, shares[i])
			keep, _ := s.keepReader(i)
			for k := range cur.states {
				live, readers := s.liveIn(cur.entsOf(&cur.states[k]), i)
				if keep >= 0 {
					// A breakpoint inside the observed read revives its
					// entry (provider.Revive): it reads, as an anchor.
					w := wSome
					if nFull <= full {
						w = wFull
					}
					for _, b := range w {
						if b <= keep && !slices.Contains(live, b) {
							live = append(live, b)
						}
					}
					slices.Sort(live)
					s.live = live
				}
				var ws []int
				if nFull+len(live) <= full && len(cur.states) <= fullStates {
					ws = wFull
					s.anchors.subsets(live, prompt.MaxBreakpoints)
				} else {
					exact = false
					ws = wSome
					s.anchors.topAnchors(live, wSome)
				}
				ws = append(append(s.ws[:0], ws...), readers...)
				slices.Sort(ws)
				ws = slices.Compact(ws)
				ws = slices.DeleteFunc(ws, func(k int) bool { return slices.Contains(live, k) })
				s.ws = ws
				s.resetSiblings(i)
				clean := s.prepare(cur, k, i)
				for n := range s.anchors.len() {
					a := s.anchors.at(n)
					top := -1
					if len(a) > 0 {
						top = a[len(a)-1]
					}
					// A breakpoint below an anchor writes nothing.
					above := ws[sort.SearchInts(ws, top+1):]
					s.writes.subsets(above, prompt.MaxBreakpoints-len(a))
					for m := range s.writes.len() {
						w := s.writes.at(m)
						for split := 0; split <= len(w); split++ {
							if bps := s.marks(a, w, split); !s.repeated(cur, &cur.states[k], i, bps) {
								s.add(next, cur, k, i, bps, clean)
							}
							if len(w) == 0 {
								break
							}
						}
					}
				}
				s.peak = max(s.peak, len(next.ents))
				if len(next.ents) > maxEnts && len(next.states) > beam {
					// The candidates so far hold too many entries: cut
					// them to the beam before the next state's, freeing
					// their room (a bound on memory, not on quality
					// alone: the bound reports the gap).
					s.trim(next, aheads[i], beam, true)
					if capped == 0 || s.cappedAt != i {
						capped++
					}
					s.cappedAt, exact = i, false
				}
			}
		}
		if len(next.states) > beam {
			s.trim(next, aheads[i], beam, false)
			exact = false
		}
		for k := range next.states {
			st := &next.states[k]
			st.link = tr.add(st.from, next.bps[st.bps:st.bps+st.nbps])
		}
		cur, next = next, cur
	}
	best := &cur.states[0]
	for k := range cur.states[1:] {
		if st := &cur.states[k+1]; st.cost < best.cost {
			best = st
		}
	}
	res := &Result{Schedule: make([][]prompt.Breakpoint, len(calls)), Source: "search", Capped: capped, peak: s.peak, skipped: s.skipped}
	for i, l := len(calls)-1, best.link; i >= 0; i, l = i-1, tr.links[l].from {
		if calls[i].Fixed {
			res.Schedule[i] = calls[i].Policy // replayed as sent
		} else {
			bps := tr.bps(l)
			res.Schedule[i] = append(make([]prompt.Breakpoint, 0, len(bps)), bps...)
		}
	}
	return res, exact, nil
}

// trim keeps the beam best states of next: by cost so far plus what the
// next call of each conversation under way (ahead) would pay for the part
// of its prompt the state cannot serve (a pure cost-so-far ranking keeps
// the states that skipped writes). With compact, the kept states' entries
// and breakpoints move to the front of the layer's arrays and its index is
// rebuilt, so more candidates can be added in the room the others held.
func (s *solver) trim(next *layer, ahead []int, beam int, compact bool) {
	// order is a max-heap of the beam best so far (cmpRanked is a total
	// order: the same states as sorting them all, in the same order).
	order := s.order[:0]
	for k := range next.states {
		st := &next.states[k]
		r := ranked{rank: st.cost, nents: st.nents, k: int32(k)}
		for _, j := range ahead {
			r.rank += s.deficit(next.entsOf(st), j)
		}
		order = keepBest(order, r, beam)
	}
	slices.SortFunc(order, cmpRanked)
	kept := s.kept[:0]
	for _, r := range order {
		kept = append(kept, next.states[r.k])
	}
	next.states = append(next.states[:0], kept...)
	s.order, s.kept = order, kept
	if !compact {
		return
	}
	ents, bps := s.spareEnts[:0], s.spareBps[:0]
	next.index.reset()
	for k := range next.states {
		st := &next.states[k]
		off, boff := len(ents), len(bps)
		ents = append(ents, next.entsOf(st)...)
		bps = append(bps, next.bps[st.bps:st.bps+st.nbps]...)
		st.ents, st.bps = int32(off), int32(boff)
		head, ok := next.index.get(st.key)
		if !ok {
			head = -1
		}
		st.same = head
		next.index.set(st.key, int32(k))
	}
	s.spareEnts, next.ents = next.ents, ents
	s.spareBps, next.bps = next.bps, bps
}

// ranked is a state's place in the beam: by rank; among equals, the
// state holding more entries keeps more options (a floor entry kept alive
// by a free anchor or write); then the order found, so that the sort is
// stable. The states themselves are not sorted: they are larger to move.
type ranked struct {
	rank  float64
	nents int32
	k     int32 // index in the layer
}

// keepBest adds r to h, a max-heap (by cmpRanked) of the n best ranked
// seen, when it is among them.
func keepBest(h []ranked, r ranked, n int) []ranked {
	if len(h) < n {
		h = append(h, r)
		for k := len(h) - 1; k > 0; {
			p := (k - 1) / 2
			if cmpRanked(h[p], h[k]) >= 0 {
				break
			}
			h[p], h[k] = h[k], h[p]
			k = p
		}
		return h
	}
	if cmpRanked(r, h[0]) >= 0 {
		return h
	}
	h[0] = r
	for k := 0; ; {
		c := 2*k + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && cmpRanked(h[c+1], h[c]) > 0 {
			c++
		}
		if cmpRanked(h[k], h[c]) >= 0 {
			break
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
	return h
}

func cmpRanked(a, b ranked) int {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	if c := cmp.Compare(b.nents, a.nents); c != 0 {
		return c
	}
	return cmp.Compare(a.k, b.k)
}

// A layer is the states after one call. Their entries and breakpoints are
// spans of two flat arrays, reused call after call: a call tries hundreds
// of candidate states, and most merge into another or fall off the beam.
type layer struct {
	states []state
	ents   []ent
	bps    []prompt.Breakpoint
	index  keyIndex // first state with each key; state.same links the rest
}

func (l *layer) reset() {
	l.states, l.ents, l.bps = l.states[:0], l.ents[:0], l.bps[:0]
	l.index.reset()
}

func (l *layer) entsOf(st *state) []ent { return l.ents[st.ents : st.ents+st.nents] }

// putBps stores bps and returns their span.
func (l *layer) putBps(bps []prompt.Breakpoint) (int32, int32) {
	off := len(l.bps)
	l.bps = append(l.bps, bps...)
	return int32(off), int32(len(bps))
}

// add is state k of cur after call i with breakpoints bps, filed in next:
// merged into an equal state there (the cheaper way to reach it kept), or
// added. The child is built in s.scratch and copied into next only if it
// is kept. clean is prepare's answer for the state.
func (s *solver) add(next, cur *layer, k, i int, bps []prompt.Breakpoint, clean bool) {
	st := &cur.states[k]
	s.scratch = append(s.scratch[:0], cur.entsOf(st)...)
	sorted := len(s.scratch)
	s.touched = s.touched[:0]
	c, key := s.step(i, sorted, st.key, st.mask, bps)
	var ents []ent
	var mask uint64
	ok := false
	if clean {
		ents, key, mask, ok = s.pruneNew(i, s.scratch, sorted, key, st.mask)
	}
	if !ok {
		ents, sorted, key, mask = s.prune(i, s.scratch, sorted, key)
	}
	sortTail(ents, sorted)
	cost := st.cost + c
	head, ok := next.index.get(key)
	for j := head; ok && j >= 0; j = next.states[j].same {
		o := &next.states[j]
		if sameEnts(next.entsOf(o), ents) {
			if cost < o.cost {
				// Equal caches; the cheaper state's notes (its entries'
				// ends) are kept, as the state is.
				copy(next.entsOf(o), ents)
				o.cost, o.from = cost, st.link
				o.bps, o.nbps = next.putBps(bps)
			}
			return
		}
	}
	if !ok {
		head = -1
	}
	ch := state{ents: int32(len(next.ents)), nents: int32(len(ents)), cost: cost, key: key, mask: mask, from: st.link, same: head}
	ch.bps, ch.nbps = next.putBps(bps)
	next.ents = append(next.ents, ents...)
	next.index.set(key, int32(len(next.states)))
	next.states = append(next.states, ch)
}

// A trail is the breakpoints of every state that survived its call, with
// the state it came from: what the best final state's schedule is read
// back from.
type trail struct {
	links []link
	flat  []prompt.Breakpoint
}

type link struct {
	from   int32 // -1: the empty cache before the first call
	off, n int32 // span of flat
}

// add records a surviving state and returns its link.
func (t *trail) add(from int32, bps []prompt.Breakpoint) int32 {
	t.links = append(t.links, link{from: from, off: int32(len(t.flat)), n: int32(len(bps))})
	t.flat = append(t.flat, bps...)
	return int32(len(t.links) - 1)
}

func (t *trail) bps(l int32) []prompt.Breakpoint {
	x := t.links[l]
	return t.flat[x.off : x.off+x.n]
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
// part of its cacheable prefix no entry of ents live then can serve.
func (s *solver) deficit(ents []ent, j int) float64 {
	if j >= len(s.calls) || s.cov[j] < 0 || s.calls[j].Fixed {
		return 0
	}
	c := &s.calls[j]
	served := 0
	if k, b := s.keepReader(j); b >= 0 {
		served = c.Blocks[k].End // revived whatever the state holds
	}
	rd := s.reader(j)
	for k := range ents {
		// Only an entry that would serve more is checked.
		if x := &ents[k]; x.end > served && rd.reads(x) {
			served = x.end
		}
	}
	p := &s.rules[s.model[j]].price
	return float64(c.Blocks[s.cov[j]].End-served) * (p.Input - p.CacheRead) / 1e6
}

// A reader is what decides whether a call can read an entry: its model,
// its read limit, its prompt, and its send time.
type reader struct {
	model  int32
	limit  int
	blocks []Block
	t      int64
}

func (s *solver) reader(i int) reader {
	c := &s.calls[i]
	return reader{model: s.model[i], limit: c.readLimit(), blocks: c.Blocks, t: c.Time.UnixNano()}
}

// reads reports whether the call can read entry x: of its model, within
// its read limit, in its prompt, and live when it is sent.
func (r *reader) reads(x *ent) bool {
	return x.model == r.model && int(x.block) <= r.limit && int(x.block) < len(r.blocks) && r.blocks[x.block].Chain == x.chain &&
		x.ready <= r.t && r.t < x.expires
}

// marks is the breakpoints of anchors a (1h: they write nothing, and 1h
// keeps the order valid whatever follows) and writes w, 1h below split,
// in s.bps (valid until the next call). Anchors are sorted and writes
// sorted above them, so the list is sorted by block.
func (s *solver) marks(a, w []int, split int) []prompt.Breakpoint {
	bps := s.bps[:0]
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
	s.bps = bps
	return bps
}

// liveIn is the blocks of call i that hold an entry of ents it can read
// now, and the block its observed read past the TTL revives, sorted, in
// s.live: its anchors. An entry no breakpoint can sit on (a revived one
// at a thinking block, or under the minimum length) is read through the
// first breakpoint position above it whose lookback reaches it, which
// writes its own part: those positions are in s.readers.
func (s *solver) liveIn(ents []ent, i int) (live, readers []int) {
	live, readers = s.live[:0], s.readers[:0]
	rd := s.reader(i)
	blocks, minLen, cov := s.calls[i].Blocks, s.rules[s.model[i]].price.MinCacheable, s.cov[i]
	// The entries it reads are at distinct blocks (a block's chain is
	// one entry of the model): only the revived block may repeat one.
	add := func(k int, again bool) {
		b := k // readerOf, its first step inline: most entries are at breakpoint positions
		if !blocks[k].Cacheable || blocks[k].End < minLen || k > cov {
			b = s.readerOf(i, k)
		}
		switch {
		case b == k:
			if !again || !slices.Contains(live, k) {
				live = append(live, k)
			}
		case b > k:
			if !slices.Contains(readers, b) {
				readers = append(readers, b)
			}
		}
	}
	for k := range ents {
		if x := &ents[k]; rd.reads(x) {
			add(int(x.block), false)
		}
	}
	if k, _ := s.keepReader(i); k >= 0 {
		// The entry an observed read past the TTL revives is live in
		// every state.
		add(k, true)
	}
	slices.Sort(live)
	s.live, s.readers = live, readers
	return live, readers
}

// readerOf is the first breakpoint position b ≥ k of call i whose lookback
// reaches block k (provider.AnthropicStep: cacheable, at the minimum
// length, within Lookback blocks), or -1.
func (s *solver) readerOf(i, k int) int {
	c := &s.calls[i]
	minLen := s.rules[s.model[i]].price.MinCacheable
	for b := k; b <= min(k+provider.Lookback, s.cov[i]); b++ {
		if c.Blocks[b].Cacheable && c.Blocks[b].End >= minLen {
			return b
		}
	}
	return -1
}

// keepReader is the block k of call i's observed read past the TTL (-1:
// none, or past the read limit) and the breakpoint position b that reads
// it (readerOf; -1: none).
func (s *solver) keepReader(i int) (k, b int) {
	c := &s.calls[i]
	if k = c.anchor(); k < 0 || k > c.readLimit() {
		return -1, -1
	}
	return k, s.readerOf(i, k)
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

// sets is a list of sets of blocks in one flat array, reused from state
// to state: the anchor or write sets a state tries.
type sets struct {
	flat []int
	ends []int // ends[k] is where set k ends in flat
}

func (l *sets) len() int { return len(l.ends) }

func (l *sets) at(k int) []int {
	from := 0
	if k > 0 {
		from = l.ends[k-1]
	}
	return l.flat[from:l.ends[k]:l.ends[k]]
}

func (l *sets) reset() { l.flat, l.ends = l.flat[:0], l.ends[:0] }

func (l *sets) add(xs ...int) {
	l.flat = append(l.flat, xs...)
	l.ends = append(l.ends, len(l.flat))
}

// subsets sets l to the subsets of xs with at most n elements, each
// sorted, the empty set first, then each set extended by each later
// element in turn (the order the search tries them in).
func (l *sets) subsets(xs []int, n int) {
	l.reset()
	l.add()
	for _, x := range xs {
		for k, m := 0, l.len(); k < m; k++ {
			if s := l.at(k); len(s) < n {
				l.flat = append(l.flat, s...) // s stays valid if flat moves
				l.add(x)
			}
		}
	}
}

// topAnchors sets l to the anchor sets a call with many choices tries:
// none, the top live entry, and the top with one other at a position some
// later call shares up to (refreshing it for that call).
func (l *sets) topAnchors(live, tops []int) {
	l.reset()
	l.add()
	if len(live) == 0 {
		return
	}
	top := live[len(live)-1]
	l.add(top)
	for _, k := range live[:len(live)-1] {
		if slices.Contains(tops, k) {
			l.add(k, top)
		}
	}
}

// manyKeys is the most conversations of a piece the joint search takes on.
const manyKeys = 4

// keyList is the conversations of the calls s does not fix, in the order
// they start.
func (s *solver) keyList() []string {
	var keys []string
	for i := range s.calls {
		if k := s.calls[i].Key; !s.calls[i].Fixed && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

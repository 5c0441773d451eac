package hindsight

import (
	"time"
)

// Bound is a lower bound on what any schedule bills for calls, in USD: the
// cost of a relaxation that prices each token of each call on its own.
//
// Every prompt token of a call is billed as exactly one of read, 5m write,
// 1h write or input (usage is additive), so a schedule's bill is a sum over
// tokens. Take one block (a prefix, by hash chain and model) and the calls
// that contain it, in time order. In any schedule the block can be billed
// as a read on a call only if a live entry at or past it covers it, and
// that entry was last written or refreshed by an earlier call containing
// the block, within its TTL. The relaxation keeps just that, per block: it
// tracks, per tier, one interval that contains every such entry's life
// (ready no earlier than the writer's send time plus its fastest possible
// TTFT, expiry no later than its slowest TTFT plus the TTL), refreshes every
// live interval at every call (the real provider refreshes only the entries
// a breakpoint finds), and lets a read add a 1h interval (a real read may
// come with a write above it of either tier). Every real schedule is a
// choice in the relaxation at the same per-token price, so the relaxation's
// optimum, solved exactly per block by a small dynamic program over these
// intervals, is at most any real bill. Tokens past a call's last cacheable
// boundary at or over the minimum length are input in every schedule, and
// blocks past a call's ReadLimit are never read; output is fixed. A block
// inside a call's observed read past the TTL (Call.KeepAlive) may be read
// there, and its entries live 5m from then, whatever came before: the
// provider revives them in every schedule.
func Bound(calls []Call, opts Options) (float64, error) {
	s, err := newSolver(calls, opts)
	if err != nil {
		return 0, err
	}
	return s.bound(), nil
}

// cover is the relaxed life of a block's entries of one tier: readable
// from r, alive before e (e ≤ r: none).
type cover struct{ r, e int64 }

func (c cover) live(t int64) bool { return c.r <= t && t < c.e }

// add merges a new entry's life into c at time t; dead is whether c's
// life is over for every later call.
func (c cover) add(n cover, dead bool) cover {
	if dead || c.e <= c.r {
		return n
	}
	return cover{min(c.r, n.r), max(c.e, n.e)}
}

func (c cover) has(o cover) bool { return o.e <= o.r || (c.r <= o.r && c.e >= o.e) }

// relaxed is one state of a block's relaxation: the 5m and 1h covers and
// the cost per token (in rate units) to reach them.
type relaxed struct {
	c5, c1 cover
	cost   float64
}

var (
	min5 = int64(5 * time.Minute)
	hour = int64(time.Hour)
)

func (s *solver) bound() float64 {
	type node struct {
		tokens int
		states []relaxed
	}
	// nodes are the blocks in first-seen order; at[m] finds model m's by
	// chain, presized for the longest prompt's distinct blocks.
	var nodes []node
	longest := 0
	for i := range s.calls {
		longest = max(longest, len(s.calls[i].Blocks))
	}
	at := make([]map[uint64]int32, len(s.models))
	for m := range at {
		at[m] = make(map[uint64]int32, longest)
	}
	fixed := 0.0
	var buf []relaxed
	for i := range s.calls {
		c := &s.calls[i]
		r := &s.rules[s.model[i]]
		p := r.price
		t := c.Time.UnixNano()
		// The fastest and slowest TTFT this call can have: no hit, or a
		// hit up to its last cacheable boundary.
		hmax := 0
		if s.cov[i] >= 0 {
			hmax = c.Blocks[s.cov[i]].End
		}
		lat := r.lat.Started(c.Started)
		a, _ := lat.Time(c.Total, 0, c.Output)
		b, _ := lat.Time(c.Total-hmax, hmax, c.Output)
		ttMin, ttMax := int64(min(a, b)), int64(max(a, b))
		if !c.Fixed {
			tail := c.Total
			if n := len(c.Blocks); n > 0 {
				tail -= c.Blocks[n-1].End
			}
			fixed += (float64(tail)*p.Input + float64(c.Output)*p.Output) / 1e6
		}
		limit := c.readLimit()
		keep := c.keep()
		prev := 0
		for k, blk := range c.Blocks {
			tok := blk.End - prev
			prev = blk.End
			if tok <= 0 {
				continue
			}
			idx, ok := at[s.model[i]][blk.Chain]
			if !ok {
				idx = int32(len(nodes))
				at[s.model[i]][blk.Chain] = idx
				nodes = append(nodes, node{tokens: tok, states: []relaxed{{}}})
			}
			n := &nodes[idx]
			// A chain is content only: calls sized apart (sessions each
			// calibrated to its own bill) send it with other sizes. The
			// provider keeps one entry for it; the bound prices every
			// call's share at the smallest size, which stays below what
			// any schedule bills.
			n.tokens = min(n.tokens, tok)
			if k > s.cov[i] {
				// No entry of this call can cover the block: input.
				if !c.Fixed {
					for j := range n.states {
						n.states[j].cost += p.Input
					}
				}
				continue
			}
			buf = buf[:0]
			n1 := cover{t + ttMin, t + ttMax + hour}
			n5 := cover{t + ttMin, t + ttMax + min5}
			// A cover that ended by the earliest later send time is dead
			// for good (calls are in send order, bar a prewarm).
			later := s.minAfter[i]
			for _, st := range n.states {
				covered := st.c5.live(t) || st.c1.live(t)
				dead5, dead1 := st.c5.e <= later, st.c1.e <= later
				if k <= keep {
					// An observed read past the TTL revives an entry
					// through keep at t, which a read refreshes for 5m
					// (provider.Revive): the block is covered, and its
					// 5m cover takes that life in.
					covered = true
					st.c5 = st.c5.add(cover{t, t + min5}, dead5)
					dead5 = false
				}
				if st.c5.live(t) {
					st.c5.e = max(st.c5.e, t+min5)
				}
				if st.c1.live(t) {
					st.c1.e = max(st.c1.e, t+hour)
				}
				switch {
				case c.Fixed:
					buf = append(buf, relaxed{st.c5, st.c1.add(n1, dead1), st.cost})
				case covered && k <= limit:
					// A read is the cheapest class and may write above.
					buf = append(buf, relaxed{st.c5, st.c1.add(n1, dead1), st.cost + p.CacheRead})
				default:
					buf = append(buf,
						relaxed{st.c5, st.c1.add(n1, dead1), st.cost + p.CacheWrite1h},
						relaxed{st.c5.add(n5, dead5), st.c1, st.cost + p.CacheWrite5m},
						relaxed{st.c5, st.c1, st.cost + p.Input})
				}
			}
			for j := range buf {
				if buf[j].c5.e <= s.minAfter[i+1] {
					buf[j].c5 = cover{}
				}
				if buf[j].c1.e <= s.minAfter[i+1] {
					buf[j].c1 = cover{}
				}
			}
			n.states = pareto(n.states[:0], buf)
		}
	}
	total := fixed
	for _, n := range nodes {
		best := n.states[0].cost
		for _, st := range n.states[1:] {
			best = min(best, st.cost)
		}
		total += float64(n.tokens) * best / 1e6
	}
	return total
}

// pareto appends to dst the states of in that no other state dominates
// (cheaper or equal with covers at least as wide), first of equals kept.
func pareto(dst, in []relaxed) []relaxed {
	for i, a := range in {
		dominated := false
		for j, b := range in {
			if i == j {
				continue
			}
			if b.cost <= a.cost && b.c5.has(a.c5) && b.c1.has(a.c1) && (b.cost < a.cost || b.c5 != a.c5 || b.c1 != a.c1 || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			dst = append(dst, a)
		}
	}
	return dst
}

package hindsight

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
)

var t0 = time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)

// testOpts prices one model at Sonnet rates with a 1024-token minimum and a
// latency with a real TTFT, so readiness and expiry depend on the hit.
func testOpts() Options {
	card := pricing.NewCard(pricing.Price{Model: "m", Provider: "anthropic", Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3, Window: 1 << 30, MinCacheable: 1024})
	return Options{Prices: card, Latency: &provider.Latency{Floor: time.Second, PrefillRate: 1000, CachedRate: 50000, DecodeRate: 100}}
}

// session builds calls from block ids and sizes: each call is a list of
// block ids, sizes[id] its tokens; block id%7 == 6 cannot carry
// cache_control (a thinking block).
type session struct {
	sizes map[int]int
	calls []Call
}

func (s *session) call(at time.Duration, out int, ids ...int) {
	var bs []Block
	var chain uint64
	end := 0
	var buf [16]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint64(buf[:8], chain)
		binary.LittleEndian.PutUint64(buf[8:], uint64(id))
		chain = xxhash.Sum64(buf[:])
		end += s.sizes[id]
		bs = append(bs, Block{Chain: chain, End: end, Cacheable: id%7 != 6})
	}
	s.calls = append(s.calls, Call{Time: t0.Add(at), Key: "s", Model: "m", Blocks: bs, Total: end + 3, Output: out})
}

// randomSession is a small conversation: a floor, growth by a block or two
// per call, now and then a rewrite of the history (a compaction) or a
// resend, at gaps around the 5m and 1h TTLs.
func randomSession(rng *rand.Rand, calls, maxBlocks int) *session {
	s := &session{sizes: map[int]int{}}
	next := 1
	newBlock := func() int {
		id := next
		next++
		s.sizes[id] = []int{200, 600, 900, 1500, 3000}[rng.IntN(5)]
		return id
	}
	ids := []int{newBlock()}
	at := time.Duration(0)
	for range calls {
		switch r := rng.IntN(10); {
		case r < 6 && len(ids) < maxBlocks:
			ids = append(ids, newBlock())
		case r < 8 && len(ids) > 1:
			ids = append(ids[:1:1], newBlock()) // compaction: floor + summary
		}
		s.call(at, 50, ids...)
		at += []time.Duration{5 * time.Second, 2 * time.Minute, 4*time.Minute + 58*time.Second, 5*time.Minute + 30*time.Second, 20 * time.Minute, 59 * time.Minute, 70 * time.Minute}[rng.IntN(7)]
	}
	return s
}

// allChoices is every valid breakpoint list of a call: subsets of its
// cacheable blocks (at most 4), each with every TTL assignment that puts 1h
// before 5m.
func allChoices(c *Call) [][]prompt.Breakpoint {
	var cand []int
	for k, b := range c.Blocks {
		if b.Cacheable {
			cand = append(cand, k)
		}
	}
	var out [][]prompt.Breakpoint
	for _, sub := range subsets(cand, prompt.MaxBreakpoints) {
		for split := 0; split <= len(sub); split++ {
			var bps []prompt.Breakpoint
			for j, k := range sub {
				ttl := prompt.TTL5m
				if j < split {
					ttl = prompt.TTL1h
				}
				bps = append(bps, prompt.Breakpoint{Block: k, TTL: ttl})
			}
			out = append(out, bps)
		}
	}
	return out
}

// subsets is the subsets of xs with at most n elements, in the search's
// order (sets.subsets).
func subsets(xs []int, n int) [][]int {
	var l sets
	l.subsets(xs, n)
	out := make([][]int, l.len())
	for k := range out {
		out[k] = l.at(k)
	}
	return out
}

// TestSubsets: the search tries sets in this order (the order of the
// states it keeps among equals), at most n elements each.
func TestSubsets(t *testing.T) {
	got := subsets([]int{1, 2, 3}, 2)
	want := [][]int{{}, {1}, {2}, {1, 2}, {3}, {1, 3}, {2, 3}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k := range want {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("set %d: %v, want %v", k, got[k], want[k])
		}
	}
}

// bruteForce is the cheapest bill of every schedule, each replayed through
// the fake provider.
func bruteForce(t *testing.T, calls []Call, opts Options) float64 {
	choices := make([][][]prompt.Breakpoint, len(calls))
	for i := range calls {
		choices[i] = allChoices(&calls[i])
	}
	best := math.Inf(1)
	sch := make([][]prompt.Breakpoint, len(calls))
	var rec func(i int)
	rec = func(i int) {
		if i == len(calls) {
			_, cost, err := Replay(calls, sch, opts)
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, sum(cost))
			return
		}
		for _, ch := range choices[i] {
			sch[i] = ch
			rec(i + 1)
		}
	}
	rec(0)
	return best
}

const eps = 1e-12

// TestBruteForce: on random small sessions no schedule is cheaper than
// Solve's, Solve's schedule replays to exactly its reported cost, and the
// bound is at most the optimum. With FullChoices forced down, the
// restricted search is still feasible and bounded.
func TestBruteForce(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	rng := rand.New(rand.NewPCG(16, 1))
	for k := range n {
		calls, blocks := 3, 4
		if k%2 == 1 {
			calls, blocks = 4, 3
		}
		s := randomSession(rng, calls, blocks)
		opts := testOpts()
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			want := bruteForce(t, s.calls, opts)
			res, err := Solve(context.Background(), s.calls, opts)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.CostUSD-want) > eps {
				t.Errorf("Solve $%.9f (source %s), brute force $%.9f", res.CostUSD, res.Source, want)
			}
			if !res.Exact {
				t.Errorf("a small session's search was not exact")
			}
			_, cost, err := Replay(s.calls, res.Schedule, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := sum(cost); got != res.CostUSD {
				t.Errorf("schedule replays to $%.9f, reported $%.9f", got, res.CostUSD)
			}
			if res.BoundUSD > want+eps {
				t.Errorf("bound $%.9f above the optimum $%.9f", res.BoundUSD, want)
			}
			o := opts
			o.FullChoices = 1
			r2, err := Solve(context.Background(), s.calls, o)
			if err != nil {
				t.Fatal(err)
			}
			if r2.CostUSD < want-eps || r2.BoundUSD > want+eps {
				t.Errorf("restricted search: cost $%.9f bound $%.9f around the optimum $%.9f", r2.CostUSD, r2.BoundUSD, want)
			}
			t.Logf("optimum $%.6f bound $%.6f restricted search $%.6f", want, res.BoundUSD, r2.CostUSD)
		})
	}
}

// TestSolvePoolReuse: a Solve on the buffers another left in the pool
// gives the result it gives on fresh ones. The short tape's last call
// looks up its blocks 1 and 2 (no later call has them); the long tape's
// call at the same index is the first to write there, for its next call
// to read.
func TestSolvePoolReuse(t *testing.T) {
	opts := testOpts()
	s := &session{sizes: map[int]int{1: 5000, 2: 5000, 3: 5000, 4: 100}}
	s.call(0, 10, 1, 2, 3)
	s.call(time.Minute, 10, 1, 2, 3)
	short := s.calls
	s = &session{sizes: s.sizes}
	s.call(0, 10, 1)
	s.call(time.Minute, 10, 1, 2, 3)
	s.call(2*time.Minute, 10, 1, 2, 3, 4)
	long := s.calls
	want, err := Solve(context.Background(), long, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want.Usage[2].CacheRead < 15000 {
		t.Fatalf("the third call reads %d tokens: the test needs it to read what the second wrote", want.Usage[2].CacheRead)
	}
	for range 3 {
		if _, err := Solve(context.Background(), short, opts); err != nil {
			t.Fatal(err)
		}
		got, err := Solve(context.Background(), long, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the long tape solved after the short one: $%.6f, alone $%.6f", got.CostUSD, want.CostUSD)
		}
	}
}

// BenchmarkSolveLinear solves a growing conversation of 250 and 1000 calls
// (3 blocks a call, gaps of 20 s to 7 min). Compare ns/call of the two:
// the search is linear in calls; the bound steps every block of every
// call, so its share grows with the prompt.
func BenchmarkSolveLinear(b *testing.B) {
	for _, n := range []int{250, 1000} {
		b.Run(fmt.Sprint("calls=", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := &session{sizes: map[int]int{}}
			var ids []int
			at := time.Duration(0)
			for i := range n {
				for k := range 3 {
					id := 3*i + k + 1
					s.sizes[id] = 50 + rng.IntN(400)
					ids = append(ids, id)
				}
				s.call(at, 100, ids...)
				at += []time.Duration{20 * time.Second, time.Minute, 7 * time.Minute}[rng.IntN(3)]
			}
			opts := testOpts()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Solve(context.Background(), s.calls, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}

// TestGaps: across a 20-minute gap the optimum keeps the prefix with a 1h
// entry; across a two-hour gap nothing survives; a 2-minute gap is not
// listed.
func TestGaps(t *testing.T) {
	s := &session{sizes: map[int]int{1: 5000, 2: 3000, 3: 100, 4: 100, 5: 100}}
	s.call(0, 10, 1, 2)
	s.call(2*time.Minute, 10, 1, 2, 3)
	s.call(22*time.Minute, 10, 1, 2, 3, 4)
	s.call(3*time.Hour, 10, 1, 2, 3, 4, 5)
	res, err := Solve(context.Background(), s.calls, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	gaps := Gaps(s.calls, res, 5*time.Minute)
	if len(gaps) != 2 {
		t.Fatalf("%d gaps, want 2: %+v", len(gaps), gaps)
	}
	if g := gaps[0]; g.Idle != 20*time.Minute || g.Choice != "1h" || g.Read != 8100 {
		t.Errorf("20-minute gap: %+v, want 1h reading 8,100", g)
	}
	if g := gaps[1]; g.Choice != "none" || g.Read != 0 {
		t.Errorf("3-hour gap: %+v, want none", g)
	}
}

// TestSeparate: two sessions share a floor. The joint optimum has the
// first write it and the second read it, so the first pays more than under
// its own (uncached) schedule; Separate leaves no session above its
// policy's bill.
func TestSeparate(t *testing.T) {
	s := &session{sizes: map[int]int{1: 20000, 2: 50, 3: 50}}
	s.call(0, 10, 1, 2)
	s.call(time.Minute, 10, 1, 3)
	s.calls[1].Key = "b"
	opts := testOpts()
	res, err := Solve(context.Background(), s.calls, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cost[0] <= res.PolicyCost[0] {
		t.Fatalf("joint optimum: first session $%.6f, policy $%.6f; the test needs it above", res.Cost[0], res.PolicyCost[0])
	}
	joint := res.CostUSD
	if _, err := Separate(s.calls, res, func(k string) string { return k }, opts); err != nil {
		t.Fatal(err)
	}
	for i := range s.calls {
		if res.Cost[i] > res.PolicyCost[i]+eps {
			t.Errorf("session %s: $%.6f after Separate, policy $%.6f", s.calls[i].Key, res.Cost[i], res.PolicyCost[i])
		}
	}
	if res.CostUSD < joint-eps || res.Exact {
		t.Errorf("separated $%.6f (exact %v) against the joint optimum $%.6f", res.CostUSD, res.Exact, joint)
	}
	_, cost, err := Replay(s.calls, res.Schedule, opts)
	if err != nil || sum(cost) != res.CostUSD {
		t.Errorf("schedule replays to $%.6f (%v), reported $%.6f", sum(cost), err, res.CostUSD)
	}
}

// TestLayerCap: MaxLayerEntries bounds what a call's candidate states hold
// together. On random sessions cut to a quarter of what they need, the
// search holds at most the cap plus one state's candidates, says how many
// calls it cut (Capped) and that its schedule is not proven optimal unless
// it meets the bound, and its schedule still replays to its cost, between
// the bound and the policy's bill.
func TestLayerCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 4))
	opts := testOpts()
	cut := 0
	for k := range 12 {
		s := randomSession(rng, 30, 8)
		withPolicy(rng, s.calls)
		free, err := Solve(context.Background(), s.calls, opts)
		if err != nil {
			t.Fatal(err)
		}
		if free.Capped != 0 {
			t.Fatalf("session %d: cut at the default cap: %d calls", k, free.Capped)
		}
		o := opts
		o.MaxLayerEntries = max(1, free.peak/4)
		res, err := Solve(context.Background(), s.calls, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Capped == 0 {
			continue // the beam's trim at each call's end kept it under
		}
		cut++
		if res.peak >= free.peak {
			t.Errorf("session %d: held %d entries at most, %d uncut: the cap saves nothing", k, res.peak, free.peak)
		}
		if res.Exact && res.CostUSD-res.BoundUSD > 1e-9*res.CostUSD {
			t.Errorf("session %d: a cut search claims exactness $%.6f above its bound $%.6f", k, res.CostUSD, res.BoundUSD)
		}
		_, cost, err := Replay(s.calls, res.Schedule, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sum(cost)-res.CostUSD) > eps || res.BoundUSD > res.CostUSD+eps || res.CostUSD > res.PolicyUSD+eps {
			t.Errorf("session %d: replays to $%.9f, reported $%.9f, bound $%.9f, policy $%.9f", k, sum(cost), res.CostUSD, res.BoundUSD, res.PolicyUSD)
		}
		t.Logf("session %d: cap %d: %d calls cut, held %d (uncut %d); $%.6f against $%.6f uncut, bound $%.6f", k, o.MaxLayerEntries, res.Capped, res.peak, free.peak, res.CostUSD, free.CostUSD, res.BoundUSD)
	}
	if cut == 0 {
		t.Error("no session was cut: the test exercises nothing")
	}
}

// Package resultstest holds the small runs the tests of package results
// and of its renderings (package report) are worked out on, so both
// measure and draw the same records.
package resultstest

import (
	"math"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// T0 is when the fixture runs start.
var T0 = time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)

// Opus is the embedded rate card's claude-opus-4-6 price, every fixture
// call's.
func Opus() pricing.Price {
	p, err := pricing.Default().Lookup("claude-opus-4-6")
	if err != nil {
		panic(err)
	}
	return p
}

// Call is a billed call record of trace "t" under policy "p", priced at
// claude-opus-4-6, sec seconds after T0.
func Call(seq, turn int, sec int, u traces.Usage, latency int64) sim.Record {
	return sim.Record{
		Trace: "t", Policy: "p", Seq: seq, Kind: sim.KindCall, Turn: turn,
		Time: T0.Add(time.Duration(sec) * time.Second), Model: "claude-opus-4-6",
		Usage: u, CostUSD: Opus().Cost(u), Prompt: int(u.Prompt()), Threshold: 100000, Window: 200000,
		LatencyMS: latency,
	}
}

// WithRecorded is r with u as its recorded (billed) usage.
func WithRecorded(r sim.Record, u traces.Usage) sim.Record {
	r.Recorded = &u
	r.RecordedCostUSD = Opus().Cost(u)
	return r
}

// Run is a small run: three calls, a batch compaction shedding 10,000
// tokens, two calls after it (the first rewrites the new prompt, the second
// is cache-stable), an overflow of a 210,000-token prompt and a breaker
// trip. The numbers in results.TestSummarize are worked out by hand from
// it.
func Run() []sim.Record {
	c0 := Call(0, 1, 0, traces.Usage{Input: 10, CacheWrite5m: 10000, Output: 100}, 1000)
	c1 := Call(1, 1, 10, traces.Usage{Input: 10, CacheWrite5m: 2000, CacheRead: 10000, Output: 100}, 1200)
	c2 := Call(2, 2, 60, traces.Usage{Input: 10, CacheWrite5m: 2000, CacheRead: 12000, Output: 100}, 1400)
	summ := traces.Usage{Input: 14000, Output: 500}
	batch := sim.Record{Trace: "t", Policy: "p", Seq: 3, Kind: sim.KindBatch, Turn: 3, Time: T0.Add(120 * time.Second),
		Model: "claude-opus-4-6", Usage: summ, CostUSD: Opus().Cost(summ), Trigger: "threshold", Outcome: "compacted",
		TokensBefore: 14010, TokensAfter: 4010, LatencyMS: 3000}
	c4 := Call(4, 3, 123, traces.Usage{Input: 10, CacheWrite5m: 4000, Output: 100}, 800)
	c4.StallMS = 3000
	c4.SetDetail(sim.DetailUserMsgs, 3)
	c4.SetDetail(sim.DetailUserVerbatim, 2)
	c5 := Call(5, 3, 130, traces.Usage{Input: 10, CacheWrite5m: 1000, CacheRead: 4000, Output: 100}, 900)
	over := sim.Record{Trace: "t", Policy: "p", Seq: 6, Kind: sim.KindCall, Turn: 4, Time: T0.Add(200 * time.Second),
		Model: "claude-opus-4-6", Error: "provider: 400: prompt is too long", LatencyMS: 50,
		Prompt: 210_000, Threshold: 100000, Window: 200000}
	brk := sim.Record{Trace: "t", Policy: "p", Seq: 7, Kind: sim.KindBreaker, Turn: 4, Time: T0.Add(200 * time.Second), Outcome: "tripped"}
	return []sim.Record{
		WithRecorded(c0, c0.Usage),
		WithRecorded(c1, traces.Usage{Input: 10, CacheWrite5m: 1000, CacheRead: 11000, Output: 100}),
		WithRecorded(c2, c2.Usage),
		batch, c4, c5, over, brk,
	}
}

// TwoPolicies is Run (a compacting policy, "p") next to the same calls
// under a policy that never compacts ("flat").
func TwoPolicies() []sim.Record {
	recs := Run()
	prompt := int64(10010)
	for i := 0; i < 5; i++ {
		u := traces.Usage{Input: 10, CacheWrite5m: 2000, CacheRead: prompt - 10, Output: 100}
		if i == 0 {
			u = traces.Usage{Input: 10, CacheWrite5m: 10000, Output: 100}
		}
		r := Call(i, i+1, i*10, u, 1000)
		r.Policy = "flat"
		recs = append(recs, r)
		prompt = u.Prompt() + 2000
	}
	return recs
}

// Near reports whether a and b agree to 1e-9, relative to b (absolute
// below 1).
func Near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

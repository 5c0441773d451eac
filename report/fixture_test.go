package report

import (
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

var t0 = time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)

func opus() pricing.Price {
	p, err := pricing.Default().Lookup("claude-opus-4-6")
	if err != nil {
		panic(err)
	}
	return p
}

// call is a billed call record priced at claude-opus-4-6.
func call(seq, turn int, sec int, u traces.Usage, latency int64) sim.Record {
	return sim.Record{
		Trace: "t", Policy: "p", Seq: seq, Kind: sim.KindCall, Turn: turn,
		Time: t0.Add(time.Duration(sec) * time.Second), Model: "claude-opus-4-6",
		Usage: u, CostUSD: opus().Cost(u), Prompt: int(u.Prompt()), Threshold: 100000, Window: 200000,
		LatencyMS: latency,
	}
}

func withRecorded(r sim.Record, u traces.Usage) sim.Record {
	r.Recorded = &u
	r.RecordedCostUSD = opus().Cost(u)
	return r
}

// fixture is a small run: three calls, a batch compaction shedding 10,000
// tokens, two calls after it (the first rewrites the new prompt, the second
// is cache-stable), an overflow of a 210,000-token prompt and a breaker
// trip. The numbers in
// TestSummarize are worked out by hand from it.
func fixture() []sim.Record {
	c0 := call(0, 1, 0, traces.Usage{Input: 10, CacheWrite5m: 10000, Output: 100}, 1000)
	c1 := call(1, 1, 10, traces.Usage{Input: 10, CacheWrite5m: 2000, CacheRead: 10000, Output: 100}, 1200)
	c2 := call(2, 2, 60, traces.Usage{Input: 10, CacheWrite5m: 2000, CacheRead: 12000, Output: 100}, 1400)
	summ := traces.Usage{Input: 14000, Output: 500}
	batch := sim.Record{Trace: "t", Policy: "p", Seq: 3, Kind: sim.KindBatch, Turn: 3, Time: t0.Add(120 * time.Second),
		Model: "claude-opus-4-6", Usage: summ, CostUSD: opus().Cost(summ), Trigger: "threshold", Outcome: "compacted",
		TokensBefore: 14010, TokensAfter: 4010, LatencyMS: 3000}
	c4 := call(4, 3, 123, traces.Usage{Input: 10, CacheWrite5m: 4000, Output: 100}, 800)
	c4.StallMS = 3000
	c4.SetDetail(sim.DetailUserMsgs, 3)
	c4.SetDetail(sim.DetailUserVerbatim, 2)
	c5 := call(5, 3, 130, traces.Usage{Input: 10, CacheWrite5m: 1000, CacheRead: 4000, Output: 100}, 900)
	over := sim.Record{Trace: "t", Policy: "p", Seq: 6, Kind: sim.KindCall, Turn: 4, Time: t0.Add(200 * time.Second),
		Model: "claude-opus-4-6", Error: "provider: 400: prompt is too long", LatencyMS: 50,
		Prompt: 210_000, Threshold: 100000, Window: 200000}
	brk := sim.Record{Trace: "t", Policy: "p", Seq: 7, Kind: sim.KindBreaker, Turn: 4, Time: t0.Add(200 * time.Second), Outcome: "tripped"}
	return []sim.Record{
		withRecorded(c0, c0.Usage),
		withRecorded(c1, traces.Usage{Input: 10, CacheWrite5m: 1000, CacheRead: 11000, Output: 100}),
		withRecorded(c2, c2.Usage),
		batch, c4, c5, over, brk,
	}
}

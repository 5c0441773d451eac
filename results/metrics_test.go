package results

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results/resultstest"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// A policy that never compacts is measured against the threshold hermes
// would use for its model, not the window, and its rejected prompts count:
// overflowing 23 times must not read lower than a policy that compacts.
func TestOccupancyWithoutThreshold(t *testing.T) {
	if got := HermesThreshold(200_000); got != 150_000 {
		t.Errorf("HermesThreshold(200K) = %d, want 150000", got)
	}
	if got := HermesThreshold(1_000_000); got != 256_000 {
		t.Errorf("HermesThreshold(1M) = %d, want 256000 (the cap)", got)
	}
	ok := resultstest.Call(0, 1, 0, traces.Usage{Input: 10, CacheWrite5m: 119_990, Output: 100}, 1000)
	ok.Threshold = 0
	over := sim.Record{Trace: "t", Policy: "p", Seq: 1, Kind: sim.KindCall, Turn: 2, Time: resultstest.T0.Add(time.Minute),
		Model: "claude-opus-4-6", Error: "provider: 400: prompt is too long", Prompt: 240_000, Window: 200_000}
	s := Summarize("t", "p", []sim.Record{ok, over}, Options{})
	if !resultstest.Near(s.Occupancy.Max, 1.6) || !resultstest.Near(s.Occupancy.Mean, (0.8+1.6)/2) {
		t.Errorf("occupancy max %v mean %v, want 1.6 and 1.2 (÷ 150000)", s.Occupancy.Max, s.Occupancy.Mean)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize("t", "p", resultstest.Run(), Options{})

	if s.Requests != 5 {
		t.Errorf("Requests = %d, want 5", s.Requests)
	}
	wantTok := traces.Usage{Input: 50, CacheWrite5m: 19000, CacheRead: 26000, Output: 500}
	if s.Tokens != wantTok {
		t.Errorf("Tokens = %+v, want %+v", s.Tokens, wantTok)
	}
	// Calls: 50×5 + 19000×6.25 + 26000×0.5 + 500×25 = 144500 µ$; summarizer
	// 14000×5 + 500×25 = 82500 µ$.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"CostUSD", s.CostUSD, 0.227},
		{"SummarizerCostUSD", s.SummarizerCostUSD, 0.0825},
		{"CostByClass.Input", s.CostByClass.Input, 0.00025},
		{"CostByClass.CacheWrite5m", s.CostByClass.CacheWrite5m, 0.11875},
		{"CostByClass.CacheRead", s.CostByClass.CacheRead, 0.013},
		{"CostByClass.Output", s.CostByClass.Output, 0.0125},
		{"CacheHitRate", s.CacheHitRate, 26000.0 / 45050},
		{"RequestHitRate", s.RequestHitRate, (10000.0/12010 + 12000.0/14010 + 4000.0/5010) / 5},
		// (50×5 + 19000×6.25) − 19050×0.5 µ$
		{"MissCostUSD", s.MissCostUSD, (250 + 118750 - 9525) / 1e6},
		// The rejected 210,000-token prompt counts: it is what was sent.
		{"Occupancy.Mean", s.Occupancy.Mean, (10010 + 12010 + 14010 + 4010 + 5010 + 210000) / 6.0 / 100000},
		{"Occupancy.Max", s.Occupancy.Max, 2.1},
		{"Occupancy.Final", s.Occupancy.Final, 2.1},
	} {
		if !resultstest.Near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	cls := s.CostByClass
	if sum := cls.Input + cls.CacheWrite5m + cls.CacheWrite1h + cls.CacheRead + cls.Output + cls.Summarizer; !resultstest.Near(sum, s.CostUSD) {
		t.Errorf("cost_by_class sums to %v, cost_usd is %v", sum, s.CostUSD)
	}
	// Turns: 1 → 1000+1200, 2 → 1400, 3 → 800+3000+900, 4 → 50.
	if want := (Latency{P50: 1400, P95: 4700, Max: 4700}); s.LatencyMS != want {
		t.Errorf("LatencyMS = %+v, want %+v", s.LatencyMS, want)
	}
	if s.StallMS != 3000 {
		t.Errorf("StallMS = %d, want 3000", s.StallMS)
	}
	if want := (Compactions{Batch: 1}); s.Compactions != want {
		t.Errorf("Compactions = %+v, want %+v", s.Compactions, want)
	}
	if s.BreakerTrips != 1 || s.OverflowErrors != 1 || s.FailedRequests != 0 {
		t.Errorf("trips, overflows, failed = %d, %d, %d, want 1, 1, 0", s.BreakerTrips, s.OverflowErrors, s.FailedRequests)
	}
	if s.UserMessagesVerbatim == nil || !resultstest.Near(*s.UserMessagesVerbatim, 2.0/3) {
		t.Errorf("UserMessagesVerbatim = %v, want 2/3", s.UserMessagesVerbatim)
	}
	if s.TokensShed != 10000 {
		t.Errorf("TokensShed = %d, want 10000", s.TokensShed)
	}

	require.NotNil(t, s.Recorded)
	wantRec := traces.Usage{Input: 30, CacheWrite5m: 13000, CacheRead: 23000, Output: 300}
	if s.Recorded.Tokens != wantRec {
		t.Errorf("Recorded.Tokens = %+v, want %+v", s.Recorded.Tokens, wantRec)
	}
	// Same three calls: simulated 106150 µ$ vs recorded 100400 µ$.
	if !resultstest.Near(s.Error.CostPct, 5750.0/100400*100) {
		t.Errorf("Error.CostPct = %v", s.Error.CostPct)
	}
	if !resultstest.Near(s.Error.CacheReadPct, -1000.0/23000*100) || !resultstest.Near(s.Error.CacheWritePct, 1000.0/13000*100) {
		t.Errorf("Error = %+v", *s.Error)
	}
}

func TestCacheDamage(t *testing.T) {
	s := Summarize("t", "p", resultstest.Run(), Options{})
	require.Len(t, s.CacheDamage, 1)
	d := s.CacheDamage[0]
	// Baseline: calls 1 and 2 wrote 2000 each (call 0, the cold start, is
	// left out). Window: call 4 only (call 5 read back all 4000 tokens call
	// 4 cached). Extra: 4000 − 2000 written at $6.25/MTok; each later call
	// reads 10,000 fewer tokens at $0.50/MTok.
	want := Damage{Seq: 3, Kind: "batch", Turn: 3, TokensShed: 10000, Calls: 1, BaselineWrite: 2000,
		ExtraWriteTokens: 2000, ExtraWriteUSD: 0.0125, ReadSavingUSD: 0.005, PaybackCalls: 2.5}
	if d.Seq != want.Seq || d.Kind != want.Kind || d.TokensShed != want.TokensShed || d.Calls != want.Calls ||
		d.ExtraWriteTokens != want.ExtraWriteTokens || !resultstest.Near(d.BaselineWrite, want.BaselineWrite) ||
		!resultstest.Near(d.ExtraWriteUSD, want.ExtraWriteUSD) || !resultstest.Near(d.ReadSavingUSD, want.ReadSavingUSD) ||
		!resultstest.Near(d.PaybackCalls, want.PaybackCalls) {
		t.Errorf("damage = %+v\nwant     %+v", d, want)
	}
}

// An idle prune on a cold cache saves writes: without it the next call would
// have rewritten the whole pre-prune prompt.
func TestCacheDamageColdPrefix(t *testing.T) {
	recs := resultstest.Run()[:3]
	prune := sim.Record{Trace: "t", Policy: "p", Seq: 3, Kind: sim.KindIdle, Turn: 3, TokensBefore: 14010, TokensAfter: 8010}
	prune.SetDetail(sim.DetailPrefixCold, 1)
	after := resultstest.Call(4, 3, 4000, traces.Usage{Input: 10, CacheWrite5m: 8000, Output: 100}, 900)
	recs = append(recs, prune, after)
	d := Summarize("t", "p", recs, Options{}).CacheDamage[0]
	// Counterfactual writes: 14010 (the whole old prompt); actual 8000.
	if d.ExtraWriteTokens != 8000-14010 {
		t.Errorf("ExtraWriteTokens = %d, want %d", d.ExtraWriteTokens, 8000-14010)
	}
	if d.PaybackCalls != 0 {
		t.Errorf("PaybackCalls = %v, want 0 for a saving", d.PaybackCalls)
	}
}

// Passes that decided to do nothing, or failed, are not compactions; a
// breaker strike is not a trip.
func TestSummarizeUncommittedPasses(t *testing.T) {
	recs := resultstest.Run()
	recs = append(recs,
		sim.Record{Trace: "t", Policy: "p", Seq: 8, Kind: sim.KindPrune, Outcome: "below_min_reclaim", TokensBefore: 5010, TokensAfter: 5010},
		sim.Record{Trace: "t", Policy: "p", Seq: 9, Kind: sim.KindBatch, Outcome: "summary_failed", TokensBefore: 5010, TokensAfter: 5010},
		sim.Record{Trace: "t", Policy: "p", Seq: 10, Kind: sim.KindBreaker, Outcome: "strike"},
		sim.Record{Trace: "t", Policy: "p", Seq: 11, Kind: sim.KindMicro, Outcome: "absorbed", TokensBefore: 5010, TokensAfter: 4000},
	)
	s := Summarize("t", "p", recs, Options{})
	if want := (Compactions{Batch: 1, Micro: 1}); s.Compactions != want {
		t.Errorf("Compactions = %+v, want %+v", s.Compactions, want)
	}
	if s.BreakerTrips != 1 {
		t.Errorf("BreakerTrips = %d, want 1", s.BreakerTrips)
	}
	if len(s.CacheDamage) != 2 || s.TokensShed != 10000+1010 {
		t.Errorf("damage entries = %d, tokens shed = %d; want 2, 11010", len(s.CacheDamage), s.TokensShed)
	}
}

func TestSummarizeUnknownModel(t *testing.T) {
	recs := resultstest.Run()
	recs[0].Model = "no-such-model"
	s := Summarize("t", "p", recs, Options{})
	if len(s.Warnings) != 1 {
		t.Fatalf("Warnings = %q, want one", s.Warnings)
	}
	if s.Requests != 5 {
		t.Errorf("Requests = %d: an unpriced call must still count", s.Requests)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize("t", "p", nil, Options{})
	if s.Requests != 0 || s.CacheHitRate != 0 || s.CacheDamage == nil {
		t.Errorf("empty summary = %+v", s)
	}
}

// Misses are summed by cause and priced at the write rate of the call that
// re-sent them, minus the read rate they would have cost.
func TestSummarizeMisses(t *testing.T) {
	recs := resultstest.Run()
	recs[1].MissReason, recs[1].MissTokens = "expired", 4000 // a 5m-tier call
	recs[2].MissReason, recs[2].MissTokens = "expired", 1000
	s := Summarize("t", "p", recs, Options{})
	if len(s.Misses) != 1 {
		t.Fatalf("misses %+v, want one cause", s.Misses)
	}
	m := s.Misses[0]
	p, _ := pricing.Default().Lookup(recs[1].Model)
	want := 5000 * (p.CacheWrite5m - p.CacheRead) / 1e6
	if m.Reason != "expired" || m.Calls != 2 || m.Tokens != 5000 || math.Abs(m.CostUSD-want) > 1e-12 {
		t.Errorf("miss %+v, want expired 2 calls 5000 tokens $%v", m, want)
	}
	if s := Summarize("t", "p", resultstest.Run(), Options{}); s.Misses == nil || len(s.Misses) != 0 {
		t.Errorf("no misses: %+v, want an empty list", s.Misses)
	}
}

// The bills that weighed a hypothesis name it in the fidelity summary:
// the shared floor kept warm once those for it outnumber those against,
// as the engine decides (sim.DetailFloorKept, sim.DetailThinkingKept).
func TestSummarizeHypotheses(t *testing.T) {
	for _, c := range []struct {
		floor, thinking []float64
		wantFloor       string
		wantThinking    string
	}{
		{floor: []float64{1, 1, 0}, wantFloor: "kept warm: 2 of 3 bills"},
		{floor: []float64{1, 0}, wantFloor: "expired: 1 of 2 bills"},
		{thinking: []float64{0, 0, 1}, wantThinking: "stripped: 2 of 3 bills"},
		{},
	} {
		recs := resultstest.Run()
		for i := range recs {
			recs[i].Recorded = &recs[i].Usage
			recs[i].Estimates = []estimate.Estimate{{Name: sim.EstimateOpenLoop, Tokens: 1}}
		}
		for i, v := range c.floor {
			recs[i].Detail = append(recs[i].Detail, compact.KV{Key: string(sim.DetailFloorKept), Value: v})
		}
		for i, v := range c.thinking {
			recs[i].Detail = append(recs[i].Detail, compact.KV{Key: string(sim.DetailThinkingKept), Value: v})
		}
		s := Summarize("t", "p", recs, Options{})
		if s.Fidelity == nil {
			t.Fatal("no fidelity summary for recorded calls")
		}
		if s.Fidelity.SharedFloor != c.wantFloor || s.Fidelity.Thinking != c.wantThinking {
			t.Errorf("floor %v thinking %v: got %q, %q; want %q, %q", c.floor, c.thinking, s.Fidelity.SharedFloor, s.Fidelity.Thinking, c.wantFloor, c.wantThinking)
		}
	}
}

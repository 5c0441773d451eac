package columnar

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

func testRuns() []results.RunSummary {
	rec := 0.75
	return []results.RunSummary{
		{
			Trace: "a", Policy: "hermes-default", Requests: 3,
			Tokens:  traces.Usage{Input: 10, CacheWrite5m: 200, CacheWrite1h: 30, CacheRead: 4000, Output: 50},
			CostUSD: 0.5, CacheHitRate: 0.94, CostByClass: results.CostByClass{ClassCost: pricing.ClassCost{Input: 0.1, CacheRead: 0.4}},
			Occupancy: results.Occupancy{Mean: 0.3, Max: 0.6, Final: 0.5}, Compactions: results.Compactions{Batch: 1, Micro: 2},
			OverflowErrors: 1,
		},
		{
			Trace: "b", Policy: "recorded", Requests: 1, Tokens: traces.Usage{Input: 7, CacheRead: 3, Output: 1}, CostUSD: 0.25,
			Recorded: &results.RecordedSummary{Tokens: traces.Usage{Input: 8, CacheRead: 3}, CostUSD: rec},
			Fidelity: &results.Fidelity{Calls: 1, CostPct: -1.5, ReadMatchPct: 100},
			Hindsight: func() *results.Hindsight {
				h := results.NewHindsight(0.25, 0.2, 0.15, false)
				h.SetBound(0.18)
				return h
			}(),
		},
	}
}

func TestRunsRoundTrip(t *testing.T) {
	var rows []Run
	for _, r := range testRuns() {
		rows = append(rows, RunOf(r, "tenant-"+r.Trace, "coding-burst"))
	}
	var buf bytes.Buffer
	if err := WriteRuns(&buf, rows); err != nil {
		t.Fatal(err)
	}
	got, err := Read[Run](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d runs, want 2", len(got))
	}
	a, b := got[0], got[1]
	if a.Trace != "a" || a.Tenant != "tenant-a" || a.Workload != "coding-burst" || a.Requests != 3 {
		t.Errorf("run a: %+v", a)
	}
	// The OTel input total includes the cached parts, and the parts add up.
	if a.InputTokens != 4240 || a.CacheReadTokens != 4000 || a.CacheCreationTokens != 230 ||
		a.UncachedTokens+a.CacheReadTokens+a.CacheCreation5m+a.CacheCreation1h != a.InputTokens || a.OutputTokens != 50 {
		t.Errorf("run a tokens: %+v", a.Usage)
	}
	if a.CostUSD != 0.5 || a.CostCacheReadUSD != 0.4 || a.OccupancyMax != 0.6 || a.CompactionsMicro != 2 || a.OverflowErrors != 1 {
		t.Errorf("run a figures: %+v", a)
	}
	if a.RecordedCostUSD != nil || a.FidelityCostPct != nil {
		t.Errorf("run a has recorded or fidelity columns set: %v %v", a.RecordedCostUSD, a.FidelityCostPct)
	}
	if b.RecordedCostUSD == nil || *b.RecordedCostUSD != 0.75 || *b.RecordedInputTokens != 11 ||
		b.FidelityCostPct == nil || *b.FidelityCostPct != -1.5 || *b.FidelityReadMatchPct != 100 {
		t.Errorf("run b recorded/fidelity: %+v", b)
	}
	if a.HindsightUSD != nil || a.HindsightExact != nil || a.HindsightBoundUSD != nil {
		t.Errorf("run a has hindsight columns set: %v %v %v", a.HindsightUSD, a.HindsightExact, a.HindsightBoundUSD)
	}
	// hindsight_usd 0.25 − 0.2 + 0.15, regret 0.05 (20 %), bound 0.18 (gap 10 %).
	if b.HindsightUSD == nil || math.Abs(*b.HindsightUSD-0.2) > 1e-12 || *b.HindsightExact || math.Abs(*b.HindsightRegretUSD-0.05) > 1e-12 ||
		math.Abs(*b.HindsightRegretPct-20) > 1e-9 || *b.HindsightBoundUSD != 0.18 || math.Abs(*b.HindsightGapPct-10) > 1e-9 {
		t.Errorf("run b hindsight: %v %v %v %v %v %v", b.HindsightUSD, b.HindsightExact, b.HindsightRegretUSD, b.HindsightRegretPct, b.HindsightBoundUSD, b.HindsightGapPct)
	}
	// The columns carry the OTel names.
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.cache_read.input_tokens",
		"gen_ai.usage.cache_creation.input_tokens", "ctxsim.usage.cache_creation_1h.input_tokens", "fidelity.cost_pct",
		"hindsight.hindsight_usd", "hindsight.bound_usd", "hindsight.gap_to_bound_pct", "hindsight.exact", "hindsight.regret_pct"} {
		if _, ok := f.Schema().Lookup(name); !ok {
			t.Errorf("runs.parquet has no column %q", name)
		}
	}
	// Same rows, same bytes.
	var again bytes.Buffer
	WriteRuns(&again, rows)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("writing the same runs twice gave different bytes")
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 123456000, time.UTC)
	recs := []sim.Record{
		{Trace: "a", Policy: "p", Seq: 0, Kind: sim.KindCall, Time: t0, Model: "claude-opus-4-6",
			Usage: traces.Usage{Input: 5, CacheWrite1h: 100, Output: 9}, CostUSD: 0.01, Prompt: 105, Window: 200000,
			Recorded: &traces.Usage{Input: 5, CacheWrite5m: 90, Output: 9}, RecordedCostUSD: 0.009, MissReason: "expired", MissTokens: 40},
		{Trace: "a", Policy: "p", Seq: 1, Kind: sim.KindBatch, Time: t0.Add(90 * time.Second), Trigger: "threshold",
			Outcome: "ok", TokensBefore: 1000, TokensAfter: 200, Usage: traces.Usage{Input: 1000, Output: 100}},
	}
	var buf bytes.Buffer
	if err := WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	got, err := Read[Record](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d records, want 2", len(got))
	}
	c, p := got[0], got[1]
	if !c.Time.Equal(t0) || c.Kind != "call" || c.Model != "claude-opus-4-6" || c.InputTokens != 105 || c.CacheCreation1h != 100 ||
		c.MissReason != "expired" || c.MissTokens != 40 || c.Window != 200000 {
		t.Errorf("call row: %+v", c)
	}
	if c.RecordedInputTokens == nil || *c.RecordedInputTokens != 95 || *c.RecordedCacheWrite != 90 || *c.RecordedCostUSD != 0.009 {
		t.Errorf("call row recorded: %+v", c)
	}
	if p.Kind != "batch" || p.Trigger != "threshold" || p.TokensBefore != 1000 || p.TokensAfter != 200 || p.RecordedInputTokens != nil ||
		!p.Time.Equal(t0.Add(90*time.Second)) {
		t.Errorf("pass row: %+v", p)
	}
}

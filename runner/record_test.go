package runner

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Merge rebuilds report.html and records.parquet from decoded records: a
// record must encode to the same bytes after a trip through JSON, whatever
// its time zone, optional fields and lists.
func TestRecordJSONRoundTrip(t *testing.T) {
	plus2 := time.FixedZone("", 2*3600)
	recs := []sim.Record{
		{Trace: "a", Policy: "p", Kind: sim.KindCall, Time: time.Date(2026, 2, 10, 21, 54, 58, 352659999, time.UTC),
			Model: "claude-opus-4-6", Usage: traces.Usage{Input: 1, CacheWrite5m: 10246, CacheRead: 17915, Output: 10},
			CostUSD: 0.07325, Recorded: &traces.Usage{Input: 2, CacheWrite1h: 10245}, RecordedCostUSD: 0.1116675,
			Prompt: 28162, Window: 200000, Breakpoints: 4, TTFTMS: 1547, LatencyMS: 1785,
			Estimates: []estimate.Estimate{{Name: sim.EstimateOpenLoop, Tokens: 28000}},
			Detail:    []compact.KV{{Key: string(sim.DetailUserMsgs), Value: 2}, {Key: "ratio", Value: 0.1 + 0.2}}},
		{Trace: "b", Policy: "p", Seq: 7, Kind: sim.KindBatch, Time: time.Date(2025, 6, 1, 8, 0, 0, 0, plus2),
			Trigger: "threshold", Outcome: "ok", TokensBefore: 9, TokensAfter: 3, Error: "x", MissReason: "expired"},
		{},
	}
	var first bytes.Buffer
	if err := report.WriteRecords(&first, recs); err != nil {
		t.Fatal(err)
	}
	var back []sim.Record
	for _, line := range bytes.Split(bytes.TrimSuffix(first.Bytes(), []byte("\n")), []byte("\n")) {
		var r sim.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		back = append(back, r)
	}
	var second bytes.Buffer
	if err := report.WriteRecords(&second, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("records changed through JSON:\n%s\n%s", first.String(), second.String())
	}
}

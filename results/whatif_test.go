package results

import "testing"

// TestWhatifNeverStarsFailedRuns pins issue 27's "a run where every call
// failed is never the cheapest": with every cell failed, the total named
// the baseline best at $0; a run whose calls all failed or overflowed is
// never best, however little it cost.
func TestWhatifNeverStarsFailedRuns(t *testing.T) {
	pols := []string{"recorded-observed", "ttl-5m", "ttl-1h"}
	if rep := NewWhatif(nil, pols); rep.Totals.Best != "" {
		t.Errorf("every cell failed: best %q, want none", rep.Totals.Best)
	}
	runs := []RunSummary{
		{Trace: "s", Policy: "recorded-observed", CostUSD: 0.2, Requests: 3},
		{Trace: "s", Policy: "ttl-5m", FailedRequests: 3},
		{Trace: "s", Policy: "ttl-1h", OverflowErrors: 3},
	}
	rep := NewWhatif(runs, pols)
	if rep.Sessions[0].Best != "recorded-observed" || rep.Totals.Best != "recorded-observed" {
		t.Errorf("best %q / %q, want recorded-observed (the others failed every call)", rep.Sessions[0].Best, rep.Totals.Best)
	}
}

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

// Each session's bound and gap come from its baseline run's hindsight;
// the total's bound is their sum when every session has one, its gap in
// % of the total optimum.
func TestWhatifGapToBound(t *testing.T) {
	pols := []string{"recorded-observed"}
	hs := func(cost, bound float64) *Hindsight {
		h := NewHindsight(cost, cost, cost, bound == cost)
		h.SetBound(bound)
		return h
	}
	runs := []RunSummary{
		{Trace: "a", Policy: "recorded-observed", CostUSD: 10, Requests: 1, Hindsight: hs(10, 8)},
		{Trace: "b", Policy: "recorded-observed", CostUSD: 5, Requests: 1, Hindsight: hs(5, 5)},
	}
	rep := NewWhatif(runs, pols)
	a, b, tot := rep.Sessions[0], rep.Sessions[1], rep.Totals
	if a.GapToBoundPct == nil || *a.GapToBoundPct != 20 || *a.HindsightBoundUSD != 8 {
		t.Errorf("session a: bound %v gap %v, want $8 and 20%%", a.HindsightBoundUSD, a.GapToBoundPct)
	}
	if b.GapToBoundPct == nil || *b.GapToBoundPct != 0 {
		t.Errorf("session b: gap %v, want 0 (proven)", b.GapToBoundPct)
	}
	if tot.HindsightBoundUSD == nil || *tot.HindsightBoundUSD != 13 || *tot.GapToBoundPct != 100*2.0/15 {
		t.Errorf("total: bound %v gap %v, want $13 and 13.3%%", tot.HindsightBoundUSD, tot.GapToBoundPct)
	}
	runs[1].Hindsight.BoundUSD, runs[1].Hindsight.GapToBoundPct = nil, nil
	if rep := NewWhatif(runs, pols); rep.Totals.HindsightBoundUSD != nil {
		t.Errorf("a session without a bound: total bound %v, want none", *rep.Totals.HindsightBoundUSD)
	}
}

// The replay's regret is never negative: an unrounded replay less its
// rounded optimum (equal to it) printed -0.000001.
func TestWhatifRegretNeverNegative(t *testing.T) {
	const cost = 0.0123445 // rounds up to 0.012345
	h := NewHindsight(cost, cost, cost, true)
	rep := NewWhatif([]RunSummary{{Trace: "a", Policy: "recorded-observed", CostUSD: cost, Requests: 1, Hindsight: h}}, []string{"recorded-observed"})
	if r := rep.Sessions[0].ReplayRegretUSD; r == nil || *r != 0 {
		t.Errorf("replay regret %v, want 0", r)
	}
}

package results

import (
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

func pivotRun(trace, policy string, cost float64, overflows, failed int) RunSummary {
	return RunSummary{Trace: trace, Policy: policy, CostUSD: cost, OverflowErrors: overflows, FailedRequests: failed,
		Tokens: traces.Usage{Input: 100, CacheRead: 300}}
}

// The case the sweep matrix got wrong: the cheapest cell overflowed the
// window (its rejected calls went unbilled) and was starred anyway.
func TestPivotBestSkipsOverflowAndFailures(t *testing.T) {
	runs := []RunSummary{
		pivotRun("a", "p[x=1]", 1.00, 0, 0),
		pivotRun("b", "p[x=1]", 1.00, 0, 0),
		pivotRun("a", "p[x=2]", 0.10, 3, 0), // cheapest, but overflowed
		pivotRun("b", "p[x=2]", 0.10, 0, 0),
		pivotRun("a", "p[x=3]", 0.20, 0, 1), // cheaper than x=4, but a call failed
		pivotRun("b", "p[x=3]", 0.20, 0, 0),
		pivotRun("a", "p[x=4]", 0.70, 0, 0),
		pivotRun("b", "p[x=4]", 0.70, 0, 0),
	}
	policy := func(r RunSummary) string { return r.Policy }
	total := NewPivot(runs, policy, func(RunSummary) string { return "total" })
	rows := []string{"p[x=1]", "p[x=2]", "p[x=3]", "p[x=4]"}
	if got := total.BestIn("total", rows); got != "p[x=4]" {
		t.Errorf("BestIn = %q, want p[x=4]: x=2 overflowed and x=3 failed a call", got)
	}
	if got := total.FirstComparable("total", rows); got != "p[x=1]" {
		t.Errorf("FirstComparable = %q, want p[x=1]", got)
	}
	x2 := total.At("p[x=2]", "total")
	if x2.Runs != 2 || x2.Overflows != 3 || x2.Comparable() || x2.CostUSD != 0.2 {
		t.Errorf("x=2 total = %+v, want 2 runs, 3 overflows, $0.20, not comparable", x2)
	}
	if hr := x2.HitRate(); hr != 0.75 {
		t.Errorf("x=2 hit rate = %v, want 0.75", hr)
	}

	// A 2×2 matrix, as sweep draws it: x rows, trace columns.
	m := NewPivot(runs, policy, func(r RunSummary) string { return r.Trace })
	r, c, ok := m.Best(rows, []string{"a", "b"})
	if !ok || r != "p[x=2]" || c != "b" {
		t.Errorf("Best = %q %q %v, want p[x=2] b (its a cell overflowed; b did not)", r, c, ok)
	}
	if _, _, ok := NewPivot(runs[2:3], policy, policy).Best([]string{"p[x=2]"}, []string{"p[x=2]"}); ok {
		t.Errorf("Best found a comparable cell among one overflowed run")
	}
	if m.At("p[x=9]", "a") != nil {
		t.Errorf("At of a missing cell is not nil")
	}
}

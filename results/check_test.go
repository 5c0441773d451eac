package results

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/results/resultstest"
	"github.com/stretchr/testify/require"
)

func checkFixture() (base, cur Summary) {
	cur = SummarizeAll(resultstest.TwoPolicies(), Options{})
	base = SummarizeAll(resultstest.TwoPolicies(), Options{})
	// The baseline claims a better hit rate for p (a regression now), a
	// higher cost for flat (an improvement now), a latency within 5%, and a
	// cell the results no longer have; cur has a cell the baseline lacks.
	base.Runs[1].CacheHitRate += 0.02
	base.Runs[0].CostUSD *= 1.10
	base.Runs[0].LatencyMS.P95 = int64(float64(cur.Runs[0].LatencyMS.P95) * 1.04)
	base.Runs = append(base.Runs, RunSummary{Trace: "gone", Policy: "p"})
	cur.Runs = append(cur.Runs, RunSummary{Trace: "added", Policy: "p"})
	return base, cur
}

func TestCheck(t *testing.T) {
	base, cur := checkFixture()
	rep := Check(base, cur, nil)
	if rep.Regressions != 1 || rep.Improvements != 1 || rep.MissingCells != 1 || rep.NewCells != 1 || rep.Cells != 2 {
		t.Errorf("report = %s", rep.Summary())
	}
	if !rep.Failed() {
		t.Errorf("Failed() = false with a regression")
	}
	want := []string{"t · p cache_hit_rate", "gone · p (missing)"}
	if got := rep.Failures(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Failures() = %q, want %q", got, want)
	}
}

func TestCheckIdentical(t *testing.T) {
	res := SummarizeAll(resultstest.TwoPolicies(), Options{})
	rep := Check(res, res, nil)
	if rep.Failed() || rep.Improvements != 0 || rep.Cells != 2 {
		t.Errorf("identical results: %s", rep.Summary())
	}
}

func TestCheckTolerance(t *testing.T) {
	base, cur := checkFixture()
	// Loose enough to absorb the 2pp hit-rate drop.
	name, tol, err := ParseTolerance("cache_hit_rate=2.5pp")
	require.NoError(t, err)
	rep := Check(base, cur, map[string]Tolerance{name: tol})
	if rep.Regressions != 0 {
		t.Errorf("with a 2.5pp tolerance: %s", rep.Summary())
	}
	// A zero compaction tolerance flags one more compaction.
	cur2 := SummarizeAll(resultstest.TwoPolicies(), Options{})
	base2 := SummarizeAll(resultstest.TwoPolicies(), Options{})
	cur2.Runs[1].Compactions.Micro++
	if rep := Check(base2, cur2, nil); rep.Regressions != 1 || rep.Rows[len(rep.Rows)-2].Verdict != Regressed {
		t.Errorf("one more compaction: %s", rep.Summary())
	}
}

func TestParseTolerance(t *testing.T) {
	for _, c := range []struct {
		in   string
		name string
		want Tolerance
	}{
		{"cache_hit_rate=0.5pp", "cache_hit_rate", Tolerance{0.005, PP}},
		{"cost=1%", "cost", Tolerance{1, Rel}},
		{"compactions=2", "compactions", Tolerance{2, Abs}},
		{" latency_p95 = 10% ", "latency_p95", Tolerance{10, Rel}},
	} {
		name, got, err := ParseTolerance(c.in)
		if err != nil || name != c.name || !resultstest.Near(got.Value, c.want.Value) || got.Kind != c.want.Kind {
			t.Errorf("ParseTolerance(%q) = %q, %+v, %v; want %q, %+v", c.in, name, got, err, c.name, c.want)
		}
	}
	for _, in := range []string{"cost", "bogus=1%", "cost=-1%", "cost=abc", "cost=1pp", "cost=NaN"} {
		if _, _, err := ParseTolerance(in); err == nil {
			t.Errorf("ParseTolerance(%q) succeeded", in)
		}
	}
	tol, err := ParseTolerances([]string{"cost=1%", "compactions=2", "cost=3%"})
	if err != nil || len(tol) != 2 || !resultstest.Near(tol["cost"].Value, 3) || tol["compactions"].Kind != Abs {
		t.Errorf("ParseTolerances = %+v, %v; want cost 3%% (the later) and compactions 2", tol, err)
	}
	if _, err := ParseTolerances([]string{"cost=1%", "bogus=1%"}); err == nil {
		t.Error("ParseTolerances with a bad spec succeeded")
	}
}

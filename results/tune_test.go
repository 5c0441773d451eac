package results_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
)

// Folds deal session groups evenly, the same way for the same seed
// whatever order the ids come in, another way for another seed.
func TestFolds(t *testing.T) {
	var ids []string
	for i := range 23 {
		ids = append(ids, fmt.Sprintf("s%02d", i))
	}
	a := results.Folds(ids, 5, 7)
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	require.Equal(t, a, results.Folds(rev, 5, 7), "the deal depends on the ids' order")
	size := make([]int, 5)
	for _, id := range ids {
		size[a[id]]++
	}
	require.Equal(t, []int{5, 5, 5, 4, 4}, size)
	b := results.Folds(ids, 5, 8)
	require.NotEqual(t, a, b, "another seed deals the same folds")
}

func TestParseConstraint(t *testing.T) {
	for in, want := range map[string]results.Constraint{
		"user_messages_verbatim>=0.9": {Metric: "user_messages_verbatim", AtLeast: true, Value: 0.9},
		"occupancy_max<=85%":          {Metric: "occupancy.max", Value: 0.85},
		" latency_p95 <= 2000":        {Metric: "latency_ms.p95", Value: 2000},
		"compactions<=3":              {Metric: "compactions", Value: 3},
	} {
		got, err := results.ParseConstraint(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"cost<=1":                   `unknown metric "cost"`,
		"compactions=3":             "want METRIC>=X or METRIC<=X",
		"tokens_shed<=-1":           "want",
		"user_messages_verbatim>=x": "want",
	} {
		_, err := results.ParseConstraint(in)
		require.ErrorContains(t, err, msg, in)
	}
}

// tuneRuns are runs of sessions under candidates, cost and occupancy
// given per (candidate, session).
func tuneRuns(cands, ids []string, cost func(c, id string) float64, occ func(c, id string) float64) []results.RunSummary {
	var out []results.RunSummary
	for _, c := range cands {
		for _, id := range ids {
			r := results.RunSummary{Trace: id, Policy: c, CostUSD: cost(c, id)}
			r.Occupancy.Max = occ(c, id)
			out = append(out, r)
		}
	}
	return out
}

// A hand-worked tune. With fold A and fold B the seed's two folds of four
// sessions: x is cheaper than the current setting on A (8 against 10 a
// session) and dearer on B (12); y is cheapest everywhere (9) but runs one
// of B's sessions at 95% occupancy, over the --keep bound. So B's training
// (fold A held out) can only keep the current setting; A's training chooses
// x, which loses 20% on B. Choosing on all sessions, x ties the current
// setting: no saving claimed, while the held-out folds measure -10%.
func TestNewTuneHandWorked(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	fold := results.Folds(ids, 2, 3)
	inA := func(id string) bool { return fold[id] == 0 }
	var firstB string
	for _, id := range ids {
		if !inA(id) && firstB == "" {
			firstB = id
		}
	}
	cost := func(c, id string) float64 {
		switch {
		case c == "x" && inA(id):
			return 8
		case c == "x":
			return 12
		case c == "y":
			return 9
		}
		return 10
	}
	occ := func(c, id string) float64 {
		switch {
		case c == "y" && id == firstB:
			return 0.95
		case c == "x":
			return 0.6
		}
		return 0.5
	}
	keep, err := results.ParseConstraint("occupancy.max<=0.9")
	require.NoError(t, err)
	setup := results.TuneSetup{Base: "p", Current: "cur", Candidates: []string{"cur", "x", "y"}, Folds: 2, Seed: 3, Keep: []results.Constraint{keep}}
	tu, err := results.NewTune(setup, tuneRuns(setup.Candidates, ids, cost, occ))
	require.NoError(t, err)

	require.Equal(t, 4, tu.Sessions)
	require.Len(t, tu.FoldList, 2)
	f1, f2 := tu.FoldList[0], tu.FoldList[1]
	require.Equal(t, "cur", f1.Chosen, "fold 1 (A) held out: B's training can only keep the current setting")
	require.Equal(t, 0.0, f1.HeldOutPct)
	require.Equal(t, 20.0, f1.SameSavingPct, "choosing on A itself claims x's 20%")
	require.Equal(t, "x", f2.Chosen)
	require.Equal(t, 20.0, f2.TrainPct)
	require.Equal(t, -20.0, f2.HeldOutPct)
	require.Equal(t, 0.0, f2.SameSavingPct)

	require.Equal(t, -10.0, tu.HeldOut.SavingPct)
	require.Equal(t, -10.0, tu.HeldOut.MeanPct)
	require.Equal(t, -20.0, tu.HeldOut.MinPct)
	require.Equal(t, 0.0, tu.HeldOut.MaxPct)
	require.InDelta(t, 10*math.Sqrt2, tu.HeldOut.SDPct, 1e-9)
	require.Equal(t, results.InSample{Chosen: "cur", SavingPct: 0}, tu.InSample)
	require.Equal(t, 10.0, tu.OptimismPP)

	// y is the cheapest over all sessions and is never recommended.
	require.Equal(t, "cur", tu.Recommended, "cur and x were each chosen once; cur saved 0%% held out, x lost 20%%")
	y := tu.Settings[2]
	require.Equal(t, 36.0, y.CostUSD)
	require.False(t, y.Eligible)
	require.Equal(t, []string{"fold 2: occupancy.max<=0.9 (95.0%)"}, y.Broken)
	require.Equal(t, -20.0, *tu.Settings[1].HeldOutPct)

	// The front of cost against occupancy: y (cheapest) and cur (x costs
	// the same at a higher occupancy).
	require.Len(t, tu.Fronts, 1)
	var on []string
	for _, p := range tu.Fronts[0].Points {
		if p.OnFront {
			on = append(on, p.Name)
		}
	}
	require.Equal(t, []string{"cur", "y"}, on)
	require.False(t, tu.Fronts[0].HigherIsBetter)
}

// A setting with rejected calls is never chosen, however cheap: its bill
// leaves the rejected calls out. With every setting ruled out nothing is
// recommended, and the folds keep the current setting.
func TestNewTuneRejectedCalls(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	runs := tuneRuns([]string{"cur", "cheap"}, ids, func(c, _ string) float64 {
		if c == "cheap" {
			return 1
		}
		return 10
	}, func(string, string) float64 { return 0.5 })
	for i := range runs {
		if runs[i].Policy == "cheap" && runs[i].Trace == "c" {
			runs[i].OverflowErrors = 2
		}
	}
	setup := results.TuneSetup{Current: "cur", Candidates: []string{"cur", "cheap"}, Folds: 2, Seed: 1}
	tu, err := results.NewTune(setup, runs)
	require.NoError(t, err)
	require.Equal(t, "cur", tu.Recommended)
	require.False(t, tu.Settings[1].Eligible)
	require.Contains(t, strings.Join(tu.Settings[1].Broken, ";"), "calls rejected in 1 session(s)")

	// A session every setting had calls rejected in is left out: no bill
	// of it is whole.
	for i := range runs {
		if runs[i].Trace == "a" {
			runs[i].FailedRequests = 1
		}
	}
	tu, err = results.NewTune(setup, runs)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, tu.Excluded)
	require.Equal(t, 3, tu.Sessions)
	require.Equal(t, "cur", tu.Recommended)

	// With the current setting's calls rejected elsewhere (b), no setting
	// is whole on every fold: nothing is recommended.
	for i := range runs {
		if runs[i].Trace == "b" && runs[i].Policy == "cur" {
			runs[i].FailedRequests = 1
		}
	}
	tu, err = results.NewTune(setup, runs)
	require.NoError(t, err)
	require.Equal(t, "", tu.Recommended)
	require.False(t, tu.Settings[0].Eligible || tu.Settings[1].Eligible)

	// A setup read back from a shard's manifest is checked, not trusted.
	_, err = results.NewTune(results.TuneSetup{Current: "cur", Candidates: []string{"cur"}, Folds: 0}, runs)
	require.ErrorContains(t, err, "0 folds: want at least 2")
	_, err = results.NewTune(results.TuneSetup{Current: "x", Candidates: []string{"cur"}, Folds: 2}, runs)
	require.ErrorContains(t, err, "the current setting x is not a candidate")
	_, err = results.NewTune(results.TuneSetup{Current: "cur", Candidates: []string{"cur"}, Folds: 2, Keep: []results.Constraint{{Metric: "cost"}}}, runs)
	require.ErrorContains(t, err, "unknown metric")
	_, err = results.NewTune(results.TuneSetup{Current: "cur", Candidates: []string{"cur"}, Folds: 5}, runs)
	require.ErrorContains(t, err, "2 session group(s) under cur: too few for 5 folds")
}

// FuzzParseConstraint reads any text as a --keep constraint: what is read
// names a tune metric with a finite, non-negative bound and reads back the
// same from its String; what is refused says what it wants.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"user_messages_verbatim>=0.9", "occupancy_max<=85%", "latency_ms.p95<=1e3", "tokens_shed<=NaN", "x>=", ">=<=", "cache_hit_rate>=1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := results.ParseConstraint(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want") && !strings.Contains(err.Error(), "unknown metric") {
				t.Fatalf("%q: refused without saying what it wants: %v", s, err)
			}
			return
		}
		if results.FindTuneMetric(c.Metric) == nil || math.IsNaN(c.Value) || math.IsInf(c.Value, 0) || c.Value < 0 {
			t.Fatalf("%q: read as %+v", s, c)
		}
		back, err := results.ParseConstraint(c.String())
		if err != nil || back != c {
			t.Fatalf("%q: %v reads back as %+v, %v", s, c, back, err)
		}
	})
}

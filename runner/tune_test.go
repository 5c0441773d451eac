package runner_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/traces"
)

var update = flag.Bool("update", false, "rewrite golden files")

// tuneEveryPreset tunes every preset over its default space on sessions
// with one runner, checks what must hold of any tune, and returns each
// preset's headline (report.TuneHeadline) and the tunes.
func tuneEveryPreset(t *testing.T, ss []*traces.Session) (string, map[string]*results.Tune) {
	t.Helper()
	rn := setup(t)
	var b strings.Builder
	tunes := map[string]*results.Tune{}
	for _, p := range policies.PresetNames() {
		tp, err := runner.NewTunePlan([]string{p}, nil, nil, nil, runner.DefaultFolds, 1, 0)
		require.NoError(t, err)
		tr, _, err := runner.Tune(context.Background(), rn, ss, tp, runner.Options{Workers: 2}, nil)
		require.NoError(t, err, p)
		tu := tr.Tune
		tunes[p] = tu
		fmt.Fprintf(&b, "%s\n\n", strings.Join(report.TuneHeadline(tu), "\n"))
		if tu.Recommended != "" {
			i := slices.Index(tu.Candidates, tu.Recommended)
			require.True(t, tu.Settings[i].Eligible, "%s: recommended %s breaks a constraint on a fold", p, tu.Recommended)
		}
		for _, f := range tu.FoldList {
			// Choosing on the fold itself can only claim more than what
			// was chosen elsewhere saves on it, when that met the same
			// constraints there.
			if len(f.Broken) > 0 {
				continue
			}
			require.GreaterOrEqual(t, f.SameSavingPct, f.HeldOutPct-1e-9, "%s fold %d", p, f.Fold)
		}
	}
	return b.String(), tunes
}

// The done-when on the embedded suite: tune recommends a setting
// per preset, with its held-out saving and the spread over folds printed
// (testdata/tune-suite.txt, reviewed; -update rewrites it), and the test
// measures whether choosing on the same sessions overstates the saving
// the held-out folds measure. It does, for four presets, and never
// understates: no-compaction (4.3% claimed for the 1h tier, -9.0% held
// out: two sessions where 1h saves 47% carry it on every training set
// they are in, and it loses on every other fold), hermes-default (0.0%
// against -4.0%: one fold's training picked the 1h tier, which lost 9.8%
// on its sessions), hermes-micro, and claude-code (3.4% against -3.8%; a
// fold of 1h sessions lost 81% under 5m). Where the folds' choice lost
// held out, the recommendation is to keep the current setting.
func TestTuneSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes the embedded suite under every preset (~10 s)")
	}
	l, err := runner.Load(context.Background(), runner.Workload{PerProfile: runner.SuitePerProfile, Seed: 1})
	require.NoError(t, err)
	got, tunes := tuneEveryPreset(t, l.Sessions)
	golden := filepath.Join("testdata", "tune-suite.txt")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "tune headlines changed: review, then go test ./runner -run TestTuneSuite -update")

	overstated := map[string]float64{}
	for p, tu := range tunes {
		require.GreaterOrEqual(t, tu.OptimismPP, -1e-9, "%s: choosing on all sessions claims less than held out", p)
		if tu.OptimismPP > 0.05 {
			overstated[p] = tu.OptimismPP
		}
		require.NotEmpty(t, tu.Recommended, p)
	}
	// no-compaction overflows the window on three sessions whatever its
	// tier: they are in no fold.
	require.Len(t, tunes["no-compaction"].Excluded, 3)
	for _, p := range []string{"no-compaction", "hermes-micro", "claude-code"} {
		require.Equal(t, p, tunes[p].Recommended, "%s: the folds' choice lost held out: keep the current setting", p)
	}
	require.Len(t, overstated, 4, "presets where choosing on the same sessions overstates: %v", overstated)
	for _, p := range []string{"no-compaction", "hermes-default", "hermes-micro", "claude-code"} {
		require.Contains(t, overstated, p)
	}
}

// The same on the training corpus (../shared/traces/corpus), when present:
// every preset's tune is printed to the test log (docs/tune.md has them).
// Every preset gets a recommendation there; with 105 session groups every
// fold chose the same setting, so the in-sample saving equalled the
// held-out one.
func TestTuneCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "traces", "corpus")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no training corpus at %s (../shared/traces/corpus beside the repository)", dir)
	}
	if testing.Short() {
		t.Skip("tunes the training corpus under every preset (minutes)")
	}
	l, err := runner.Load(context.Background(), runner.Workload{Paths: []string{dir}})
	require.NoError(t, err)
	got, tunes := tuneEveryPreset(t, l.Sessions)
	t.Logf("tune on %d corpus sessions:\n%s", len(l.Sessions), got)
	for p, tu := range tunes {
		require.Positive(t, tu.Sessions, p)
		require.Len(t, tu.FoldList, runner.DefaultFolds, p)
		require.NotEmpty(t, tu.Recommended, p)
	}
}

// A tune's outputs are byte-identical at any number of workers.
func TestTuneWorkers(t *testing.T) {
	ss := append(recordedAs(t, ""), synthetic(t)...)
	var outs [][]byte
	for _, w := range []int{1, 3} {
		tp, err := runner.NewTunePlan([]string{"hermes-prune"}, nil, []string{"compression.proactive_prune_tokens=8000,48000"}, []string{"user_messages_verbatim>=0.5"}, 3, 9, 0)
		require.NoError(t, err)
		tr, _, err := runner.Tune(context.Background(), setup(t), ss, tp, runner.Options{Workers: w}, nil)
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, tr.Write(dir, ""))
		var all []byte
		for _, f := range runner.TuneFiles {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err, f)
			all = append(all, b...)
		}
		outs = append(outs, all)
	}
	require.Equal(t, string(outs[0]), string(outs[1]))
}

func TestNewTunePlan(t *testing.T) {
	// Every preset has a default search space, each point a new setting.
	for _, p := range policies.PresetNames() {
		tp, err := runner.NewTunePlan([]string{p}, nil, nil, nil, 2, 1, 0)
		require.NoError(t, err, p)
		require.Greater(t, len(tp.Candidates), 1, p)
	}
	tp, err := runner.NewTunePlan([]string{"hermes-default"}, nil, nil, []string{"occupancy_max<=0.9"}, 4, 2, 0)
	require.NoError(t, err)
	// The default space has 3 × 2 points; the current setting (threshold
	// 0.5, 5m) is none of them, so it is added first.
	require.Equal(t, 7, len(tp.Candidates))
	require.Equal(t, "hermes-default", tp.Candidates[0].Name)
	require.Equal(t, []results.Constraint{{Metric: "occupancy.max", Value: 0.9}}, tp.Render.Setup.Keep)
	// A point equal to the current setting is the current setting.
	tp, err = runner.NewTunePlan([]string{"hermes-default"}, nil, []string{"prompt_caching.cache_ttl=5m,1h"}, nil, 2, 1, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"hermes-default", "hermes-default[cache_ttl=1h]"}, runner.PolicyNames(tp.Candidates))

	var ie *runner.InputError
	for _, c := range []struct {
		pols, grid, keep []string
		folds            int
		msg              string
	}{
		{[]string{"a.yaml", "b.yaml"}, nil, nil, 5, "{policy}: tune takes one policy"},
		{[]string{"my.yaml"}, nil, nil, 5, "{grid}: my.yaml has no default search space"},
		{[]string{"hermes-default"}, nil, nil, 1, "{folds} 1: want at least 2"},
		{[]string{"hermes-default"}, nil, []string{"cost<=3"}, 5, `{keep} "cost<=3": unknown metric`},
	} {
		_, err := runner.NewTunePlan(c.pols, nil, c.grid, c.keep, c.folds, 1, 0)
		require.ErrorAs(t, err, &ie)
		require.True(t, strings.HasPrefix(ie.Msg, c.msg), "%q, want %q", ie.Msg, c.msg)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
)

// tuneArgs tune three cron sessions and the recorded ones over a small
// grid, with a constraint.
func tuneArgs(extra ...string) []string {
	return append([]string{"tune", "--profile", "cron", "--sessions", "3", "--trace", ccDir, "--policy", "hermes-prune", "--folds", "3",
		"--grid", "compression.proactive_prune_tokens=8000,96000", "--grid", "prompt_caching.cache_ttl=5m,1h", "--keep", "user_messages_verbatim>=0.5"}, extra...)
}

// readTuneDir is every file a tune wrote to dir, concatenated in
// TuneFiles order (a missing one is an empty part).
func readTuneDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range runner.TuneFiles {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		b.WriteString("== " + f + "\n")
		b.Write(data)
	}
	return b.String()
}

// A tune prints and writes the same bytes at any -j, and its shards,
// merged, print and write what one process does.
func TestTuneShardsAndWorkers(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one")
	code, want, errs := runCmd(t, tuneArgs("-j", "1", "--out", one)...)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, want, "Held-out saving: ")
	wantFiles := readTuneDir(t, one)
	require.Contains(t, wantFiles, "== recommended.yaml\n# ctxsim tune: ")

	code, got, errs := runCmd(t, tuneArgs("-j", "3", "--out", filepath.Join(dir, "j3"))...)
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, want, got, "-j 3 prints otherwise")
	require.Equal(t, wantFiles, readTuneDir(t, filepath.Join(dir, "j3")), "-j 3 writes otherwise")

	var parts []string
	for _, k := range []string{"1/3", "2/3", "3/3"} {
		p := filepath.Join(dir, "shard-"+k[:1])
		code, out, errs := runCmd(t, tuneArgs("--shard", k, "--out", p)...)
		require.Equal(t, exitOK, code, errs)
		require.Empty(t, out, "a shard has nothing to choose on: it prints nothing")
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged")
	code, got, errs = runCmd(t, append(append([]string{"merge"}, parts...), "--out", merged)...)
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, want, got, "merge prints otherwise")
	require.Equal(t, wantFiles, readTuneDir(t, merged), "merge writes otherwise")

	code, _, errs = runCmd(t, tuneArgs("--shard", "1/3", "--out", filepath.Join(dir, "x"), "--emit", filepath.Join(dir, "x.yaml"))...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "--emit needs every shard's runs")
}

// What --emit writes is a policy the other commands take: replayed with
// compare, it costs what the tune measured for the recommended setting,
// session by session, and check passes it against itself. For a hermes
// preset it is a config.yaml fragment; for another, a policy file.
func TestTuneEmitRoundTrip(t *testing.T) {
	for _, c := range []struct{ policy, grid, shape string }{
		{"hermes-prune", "compression.proactive_prune_tokens=8000,24000", "compression:\n  proactive_prune_tokens: "},
		{"masking-sliding", "masking.keep_last=2,5", "preset: masking-sliding\nname: masking-sliding["},
	} {
		dir := t.TempDir()
		emit := filepath.Join(dir, "tuned.yaml")
		code, _, errs := runCmd(t, "tune", "--profile", "coding-burst", "--sessions", "4", "--policy", c.policy, "--grid", c.grid,
			"--folds", "2", "--out", filepath.Join(dir, "tune"), "--emit", emit)
		require.Equal(t, exitOK, code, errs)
		b, err := os.ReadFile(emit)
		require.NoError(t, err)
		require.Contains(t, string(b), c.shape)
		var tu results.Tune
		data, err := os.ReadFile(filepath.Join(dir, "tune", "tune.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &tu))
		require.NotEqual(t, tu.Current, tu.Recommended, "%s: the test needs a recommendation that changes a setting", c.policy)
		tuned, err := results.ReadFile(filepath.Join(dir, "tune", "summary.json"))
		require.NoError(t, err)

		out := filepath.Join(dir, "replay")
		code, _, errs = runCmd(t, "compare", "--profile", "coding-burst", "--sessions", "4", "--policy", emit, "--out", out)
		require.Equal(t, exitOK, code, errs)
		replayed, err := results.ReadFile(filepath.Join(out, "summary.json"))
		require.NoError(t, err)
		want := map[string]float64{}
		for _, r := range tuned.Runs {
			if r.Policy == tu.Recommended {
				want[r.Trace] = r.CostUSD
			}
		}
		require.Len(t, replayed.Runs, len(want))
		for _, r := range replayed.Runs {
			require.Equal(t, want[r.Trace], r.CostUSD, "%s: %s costs otherwise under the emitted file", c.policy, r.Trace)
		}
		sum := filepath.Join(out, "summary.json")
		code, _, errs = runCmd(t, "check", "--baseline", sum, "--results", sum)
		require.Equal(t, exitOK, code, errs)
		code, _, errs = runCmd(t, "run", ccShort, "--policy", emit)
		require.Equal(t, exitOK, code, errs)
	}
}

// Bad tune command lines are usage errors naming the flag.
func TestTuneUsage(t *testing.T) {
	for args, msg := range map[string]string{
		"tune --profile cron":                                            "--policy: tune takes one policy",
		"tune --profile cron --policy my.yaml":                           "--grid: my.yaml has no default search space",
		"tune --profile cron --policy hermes-default --folds 1":          "--folds 1: want at least 2",
		"tune --profile cron --policy hermes-default --keep cost<=3":     `--keep "cost<=3": unknown metric "cost"`,
		"tune --profile cron --policy hermes-default --keep tokens_shed": "want METRIC>=X or METRIC<=X",
	} {
		code, _, errs := runCmd(t, strings.Fields(args)...)
		require.Equal(t, exitUsage, code, args)
		require.Contains(t, errs, msg, args)
	}
	// With nothing recommended, the report still prints and --emit fails
	// saying why, writing nothing.
	emit := filepath.Join(t.TempDir(), "x.yaml")
	code, out, errs := runCmd(t, "tune", "--profile", "cron", "--sessions", "3", "--policy", "no-compaction", "--folds", "3", "--keep", "compactions>=5", "--emit", emit)
	require.Equal(t, exitFailure, code)
	require.Contains(t, out, "Recommended: none")
	require.Contains(t, errs, "no setting met the constraints on every fold: nothing to recommend")
	require.NoFileExists(t, emit)
	// More folds than session groups is the input's fault, said plainly.
	code, _, errs = runCmd(t, "tune", "--profile", "cron", "--sessions", "2", "--policy", "hermes-default", "--folds", "3")
	require.Equal(t, exitFailure, code)
	require.Contains(t, errs, "2 session group(s) under hermes-default: too few for 3 folds")
}

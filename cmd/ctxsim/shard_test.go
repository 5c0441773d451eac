package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/shard"
)

// shardMerge runs args as one run and as n shards merged, and checks that
// merge prints the run's stdout and writes its files, byte for byte. It
// returns the shard directories.
func shardMerge(t *testing.T, n int, files []string, args ...string) []string {
	t.Helper()
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	code, wantOut, errs := runCmd(t, append(args, "--out", whole)...)
	require.Equal(t, exitOK, code, "%v: %s", args, errs)
	dirs := runShards(t, root, n, args...)
	merged := filepath.Join(root, "merged")
	// Shards in reverse order: merge does not depend on it.
	rev := make([]string, n)
	for i, d := range dirs {
		rev[n-1-i] = d
	}
	mergeArgs := []string{"merge", "--out", merged}
	for i, a := range args {
		if a == "--format" || a == "--json" {
			mergeArgs = append(mergeArgs, args[i:min(i+2, len(args))]...)
		}
	}
	code, gotOut, errs := runCmd(t, append(mergeArgs, rev...)...)
	require.Equal(t, exitOK, code, "merge: %s", errs)
	if gotOut != wantOut {
		t.Errorf("merge stdout differs from the single run's at byte %d:\n--- merge ---\n%s\n--- single ---\n%s",
			firstByteDiff([]byte(gotOut), []byte(wantOut)), gotOut, wantOut)
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(whole, f))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(merged, f))
		require.NoError(t, err)
		if len(want) == 0 {
			t.Errorf("%s: the single run wrote an empty file", f)
		}
		if string(got) != string(want) {
			t.Errorf("merged %s differs from the single run's (%d vs %d bytes) at byte %d", f, len(got), len(want), firstByteDiff(got, want))
		}
	}
	return dirs
}

// runShards runs args as n shards, each with --out a directory under
// root, and returns the directories; fewer than two shards with cells
// would not exercise a merge, which fails the test.
func runShards(t *testing.T, root string, n int, args ...string) []string {
	t.Helper()
	var dirs []string
	withCells := 0
	for k := 1; k <= n; k++ {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", k))
		code, _, errs := runCmd(t, append(args, "--shard", fmt.Sprintf("%d/%d", k, n), "--out", d)...)
		require.Equal(t, exitOK, code, "shard %d/%d: %s", k, n, errs)
		if readFile(t, filepath.Join(d, shard.CellsFile)) != "" {
			withCells++
		}
		dirs = append(dirs, d)
	}
	if withCells < 2 {
		t.Fatalf("only %d of %d shards got cells: the test does not exercise a merge", withCells, n)
	}
	return dirs
}

var replayFiles = []string{"summary.json", "records.jsonl", "report.html", "runs.parquet", "records.parquet"}

// Three shards of the embedded suite merge to the bytes of one run: every
// file of --out and the workload table.
func TestShardMergeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the embedded suite twice (~10 s)")
	}
	shardMerge(t, 3, replayFiles, "compare")
}

// Real logs: the recorded Claude Code sessions, each file its own account
// (compare shards by tenant), and the directory as whatif reads it (one
// account, so whatif shards by policy).
func TestShardMergeRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the recorded sessions under every policy twice")
	}
	dir := "../../testdata/claude-code"
	args := []string{"compare", "--policy", "recorded", "--policy", "hermes-default", "--policy", "prune-on-resume"}
	for _, f := range []string{"short.jsonl", "tool_heavy.jsonl", "subagent.jsonl", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"} {
		args = append(args, "--trace", filepath.Join(dir, f))
	}
	shardMerge(t, 3, replayFiles, args...)
	shardMerge(t, 3, replayFiles, "whatif", dir)
}

// Native traces on disk take the shard's header-only path: the merge of
// shards that read only their own tenants equals the run that read all.
func TestShardMergeNative(t *testing.T) {
	if testing.Short() {
		t.Skip("replays synthetic sessions twice")
	}
	dir := t.TempDir()
	for _, p := range []string{"subagents", "cron", "coding-burst"} {
		code, _, errs := runCmd(t, "gen", "--profile", p, "--sessions", "3", "--seed", "4", "-o", dir)
		require.Equal(t, exitOK, code, errs)
	}
	shardMerge(t, 3, replayFiles, "compare", "--trace", dir, "--policy", "hermes-default", "--policy", "no-compaction", "--format", "markdown")
}

// A sweep shards by (grid point, tenant) cell and merges to the same
// summary, runs.parquet, table and cost matrix.
func TestShardMergeSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a small grid twice")
	}
	dirs := shardMerge(t, 3, []string{"summary.json", "runs.parquet"}, sweepArgs("--seed", "1")...)

	// A bad merge is refused with the shard it is about.
	root := t.TempDir()
	other := filepath.Join(root, "other-seed")
	code, _, errs := runCmd(t, append(sweepArgs("--seed", "2"), "--shard", "2/3", "--out", other)...)
	require.Equal(t, exitOK, code, errs)
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing", dirs[:2], "shard 3/3 missing"},
		{"duplicated", []string{dirs[0], dirs[1], dirs[2], dirs[1]}, "shard 2/3 given twice: " + dirs[1] + " and " + dirs[1]},
		{"other flags", []string{dirs[0], other, dirs[2]}, other + " (shard 2/3) is from another run than " + dirs[0] + " (shard 1/3): seed 1 vs 2"},
		{"not a shard", []string{dirs[0], root}, root + ": no manifest.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			code, stdout, errs := runCmd(t, append([]string{"merge", "--out", out}, tc.dirs...)...)
			if code != exitFailure || !strings.Contains(errs, tc.want) {
				t.Errorf("merge %s: exit %d, stderr %q; want exit 1 and %q", tc.name, code, errs, tc.want)
			}
			if stdout != "" {
				t.Errorf("a refused merge printed %q", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused merge created %s", out)
			}
		})
	}
}

// --shard is checked before anything runs.
func TestShardUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--shard", "1/3"}, "--shard needs --out DIR"},
		{[]string{"compare", "--shard", "0/3", "--out", "x"}, "K must be 1..3"},
		{[]string{"sweep", "--shard", "3", "--out", "x", "--policy", "hermes-default", "--grid", "compression.threshold=0.5"}, "want K/N"},
		{[]string{"whatif", "--shard", "4/3", "--out", "x", "../../testdata/claude-code"}, "K must be 1..3"},
		{[]string{"merge", "--out", "a", "a"}, "--out a is one of the shards"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// A shard's manifest names the run: the shard, the command, the seed, the
// flags that change results (not --out or --jobs) and the inputs' hashes.
func TestShardManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a small grid")
	}
	d := filepath.Join(t.TempDir(), "s")
	code, _, errs := runCmd(t, append(sweepArgs("--seed", "1"), "--shard", "1/2", "--out", d, "-j", "2")...)
	require.Equal(t, exitOK, code, errs)
	var m shard.Manifest
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(d, shard.ManifestFile))), &m))
	require.Equal(t, "1/2", m.Shard)
	require.Equal(t, "sweep", m.Command)
	require.Equal(t, uint64(1), m.Seed)
	flags := strings.Join(m.Flags, " ")
	for _, want := range []string{"seed=1", "provider=auto", `grid=["compression.micro_compact_every_n_turns=1,5","prompt_caching.cache_ttl=5m,1h"]`, "profile=[coding-burst]"} {
		require.Contains(t, flags, want)
	}
	for _, not := range []string{"out=", "jobs=", "shard="} {
		require.NotContains(t, flags, not)
	}
	// Synthetic sessions are a function of the flags, the seed and the
	// build; only files are hashed.
	require.Empty(t, m.Inputs)
}

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

// cost shards by project directory (the names are picked to fall in three
// shards); merged, it prints what one process
// prints, in text and JSON, on the recorded sessions laid out as three
// projects (one with a session's subagents below it).
func TestShardMergeCost(t *testing.T) {
	src := "../../testdata/claude-code"
	root := filepath.Join(t.TempDir(), "projects")
	for proj, files := range map[string][]string{
		"-home-ana-app": {"short.jsonl", "tool_heavy.jsonl"},
		"-home-bo-api":  {"subagent.jsonl"},
		"-home-dev-cli": {"4d5611e5-241a-462a-8d15-5122611a9569.jsonl"},
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, proj), 0o755))
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(src, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(root, proj, f), b, 0o644))
		}
	}
	copyTree(t, filepath.Join(src, "4d5611e5-241a-462a-8d15-5122611a9569"), filepath.Join(root, "-home-dev-cli", "4d5611e5-241a-462a-8d15-5122611a9569"))
	// The grouping flags reach merge through the manifest: --by day and
	// --by project group across the shards' projects.
	for _, format := range [][]string{nil, {"--json"}, {"--ccusage", "--format", "csv"},
		{"--by", "day", "--timezone", "UTC", "--json"}, {"--by", "project", "--timezone", "UTC"}} {
		args := append([]string{"cost", root}, format...)
		code, want, errs := runCmd(t, args...)
		require.Equal(t, exitOK, code, errs)
		dirs := runShards(t, t.TempDir(), 3, args...) // the projects must fall in more than one shard
		mergeArgs := append([]string{"merge"}, dirs...)
		for i, a := range format {
			if a == "--json" || a == "--format" {
				mergeArgs = append(mergeArgs, format[i:min(i+2, len(format))]...)
			}
		}
		code, got, errs := runCmd(t, mergeArgs...)
		require.Equal(t, exitOK, code, errs)
		if got != want {
			t.Errorf("cost %v: merge prints\n%s\nwant\n%s", format, got, want)
		}
		if !strings.Contains(want, "total") && !strings.Contains(want, "totals") {
			t.Fatalf("cost printed no total: %s", want)
		}
	}
	// Another format is refused, not silently split.
	code, _, errs := runCmd(t, "cost", "--from", "native", src, "--shard", "1/2", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(errs, "cost --shard splits Claude Code log trees") {
		t.Errorf("cost --shard on native traces: exit %d, %s", code, errs)
	}
}

// fidelity shards by session; merged, it prints the one-process report,
// as a table and as JSON, from the same shards.
func TestShardMergeFidelity(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the recorded sessions twice")
	}
	args := []string{"fidelity", "../../testdata/claude-code", "--worst", "3"}
	dirs := runShards(t, t.TempDir(), 3, args...) // the sessions must fall in more than one shard
	for _, format := range [][]string{nil, {"--json"}} {
		code, want, errs := runCmd(t, append(args, format...)...)
		require.Equal(t, exitOK, code, errs)
		code, got, errs := runCmd(t, append(append([]string{"merge"}, dirs...), format...)...)
		require.Equal(t, exitOK, code, errs)
		if got != want {
			t.Errorf("fidelity %v: merge prints\n%s\nwant\n%s", format, got, want)
		}
	}
}

// fidelity on captures: each capture file's as-sent replay is a unit a
// shard owns, its calls kept in the part; merged, the as-sent rows are the
// one-process run's, byte for byte, and spread over more than one shard.
func TestShardMergeFidelityCaptures(t *testing.T) {
	args := []string{"fidelity", "--from", "capture", "../../sim/assent/testdata", "../../traces/capture/testdata", "--worst", "0"}
	dirs := runShards(t, t.TempDir(), 3, args...)
	owners := 0
	for _, d := range dirs {
		if strings.Contains(readFile(t, filepath.Join(d, shard.CellsFile)), `"as-sent\u0000`) {
			owners++
		}
	}
	if owners < 2 {
		t.Fatalf("the as-sent units fell in %d shard(s): the test does not exercise their merge", owners)
	}
	for _, format := range [][]string{nil, {"--json"}} {
		code, want, errs := runCmd(t, append(args, format...)...)
		require.Equal(t, exitOK, code, errs)
		if !strings.Contains(want, "as-sent, capture anthropic (14 calls)") && !strings.Contains(want, `"api": "anthropic"`) {
			t.Fatalf("fidelity %v prints no as-sent row:\n%s", format, want)
		}
		code, got, errs := runCmd(t, append(append([]string{"merge"}, dirs...), format...)...)
		require.Equal(t, exitOK, code, errs)
		if got != want {
			t.Errorf("fidelity %v: merge prints\n%s\nwant\n%s", format, got, want)
		}
	}
}

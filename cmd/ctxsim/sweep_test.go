package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/internal/faultio"

	"github.com/ctxsim/ctxsim/runner"
)

// sweepArgs is a small sweep: 2 coding-burst sessions (two tenants) × a
// 2×2 grid = 8 cells, well under a second.
func sweepArgs(extra ...string) []string {
	return append([]string{"sweep", "--policy", "hermes-micro", "--profile", "coding-burst", "--sessions", "2",
		"--grid", "compression.micro_compact_every_n_turns=1,5", "--grid", "prompt_caching.cache_ttl=5m,1h"}, extra...)
}

// journalCells lists the (cell, tenant) keys of cells.jsonl in file order.
func journalCells(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n") {
		var l runner.JournalLine
		require.NoError(t, json.Unmarshal([]byte(line), &l), "line %q", line)
		out = append(out, l.Cell+" "+l.Tenant)
	}
	return out
}

func TestSweepResume(t *testing.T) {
	recorded := []string{"sweep", "--policy", "hermes-default",
		"--trace", filepath.Join("..", "..", "testdata", "claude-code", "short.jsonl"),
		"--trace", filepath.Join("..", "..", "testdata", "claude-code", "tool_heavy.jsonl"),
		"--grid", "prompt_caching.cache_ttl=5m,1h", "--grid", "compression.threshold=0.3,0.5"}
	// Synthetic sessions, and recorded ones (calibrated replays, rows with
	// recorded usage and errors against it).
	t.Run("synthetic", func(t *testing.T) { testSweepResume(t, sweepArgs(), 8, 3) })
	t.Run("recorded", func(t *testing.T) { testSweepResume(t, recorded, 8, 5) })
}

// testSweepResume runs args to completion, then kills the same sweep after
// kill of its cells cells, resumes it, and checks the resumed output.
func testSweepResume(t *testing.T, args []string, cells, kill int) {
	with := func(extra ...string) []string { return append(slices.Clone(args), extra...) }
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")

	code, wantOut, errs := runCmd(t, with("-j", "1", "--out", a)...)
	require.Equal(t, exitOK, code, errs)
	wantSummary := readFile(t, filepath.Join(a, "summary.json"))
	all := journalCells(t, filepath.Join(a, "cells.jsonl"))
	if len(all) != cells {
		t.Fatalf("uninterrupted run journaled %d cells, want %d: %q", len(all), cells, all)
	}

	// Kill the sweep after kill cells, in the middle of writing the next.
	var outb, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &outb, stderr: &errb,
		journal: func(w io.Writer) io.Writer { return &faultio.KillWriter{W: w, After: kill} }}
	code = runEnv(e, with("-j", "2", "--out", b))
	out, errs := outb.String(), errb.String()
	if code != exitFailure || out != "" {
		t.Fatalf("killed run: exit %d, stdout %q, stderr %q; want exit 1 and no output", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(b, "summary.json")); !os.IsNotExist(err) {
		t.Fatalf("killed run wrote summary.json (stat: %v)", err)
	}
	partial := readFile(t, filepath.Join(b, "cells.jsonl"))
	if n := strings.Count(partial, "\n"); n != kill || strings.HasSuffix(partial, "\n") {
		t.Fatalf("killed run left %d complete lines (ends in newline: %v), want %d and a torn one", n, strings.HasSuffix(partial, "\n"), kill)
	}

	code, out, errs = runCmd(t, with("-j", "2", "--out", b, "--resume")...)
	require.Equal(t, exitOK, code, errs)
	if !strings.Contains(errs, fmt.Sprintf("cells.jsonl:%d: dropped the last line, cut short", kill+1)) {
		t.Errorf("resume stderr does not warn about the torn line:\n%s", errs)
	}
	if !strings.Contains(errs, fmt.Sprintf("%d of %d cells done, %d to run", kill, cells, cells-kill)) {
		t.Errorf("resume stderr does not count the cells:\n%s", errs)
	}
	if out != wantOut {
		t.Errorf("resumed stdout differs from the uninterrupted run\n--- got ---\n%s\n--- want ---\n%s", out, wantOut)
	}
	if got := readFile(t, filepath.Join(b, "summary.json")); got != wantSummary {
		t.Errorf("resumed summary.json differs from the uninterrupted run")
	}
	// Every cell is journaled exactly once: those kept and those replayed,
	// so nothing finished before the kill ran again.
	got := journalCells(t, filepath.Join(b, "cells.jsonl"))
	if len(got) != cells {
		t.Errorf("resumed journal has %d cells, want %d: %q", len(got), cells, got)
	}
	if s1, s2 := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(all)); !slices.Equal(s1, s2) {
		t.Errorf("resumed journal cells = %q, want %q", s1, s2)
	}

	// A finished sweep resumes to the same output, running nothing.
	code, out, errs = runCmd(t, with("--out", b, "--resume")...)
	require.Equal(t, exitOK, code, errs)
	if !strings.Contains(errs, fmt.Sprintf("%d of %d cells done, 0 to run", cells, cells)) || out != wantOut {
		t.Errorf("second resume: stderr %q, stdout same as uninterrupted: %v", errs, out == wantOut)
	}
}

func TestSweepResumeRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, _, errs := runCmd(t, sweepArgs("--out", dir)...)
	require.Equal(t, exitOK, code, errs)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no --resume", sweepArgs("--out", dir), "already holds a sweep"},
		{"other seed", sweepArgs("--out", dir, "--resume", "--seed", "7"), `--seed was "1", now "7"`},
		{"other provider", sweepArgs("--out", dir, "--resume", "--provider", "openai"), `--provider was "auto", now "openai"`},
		{"other grid", append(sweepArgs("--out", dir, "--resume"), "--set", "compression.threshold=0.6"), "the grid or the base policy"},
		{"other workload", append(sweepArgs("--out", dir, "--resume"), "--profile", "cron"), "the workload differs (2 sessions then, 4 now"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(t, c.args...)
			if code != exitFailure || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 naming %q", code, errs, c.want)
			}
		})
	}

	// A damaged line that is not the last is an error naming it.
	path := filepath.Join(dir, "cells.jsonl")
	lines := strings.SplitAfter(readFile(t, path), "\n")
	lines[1] = "{not json}\n"
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644))
	code, _, errs = runCmd(t, sweepArgs("--out", dir, "--resume")...)
	if code != exitFailure || !strings.Contains(errs, "cells.jsonl:2: ") {
		t.Errorf("damaged journal: exit %d, stderr %q; want exit 1 naming cells.jsonl:2", code, errs)
	}
}

func TestSweepJobsIdentical(t *testing.T) {
	var outs []string
	for _, j := range []string{"1", "3"} {
		code, out, errs := runCmd(t, sweepArgs("-j", j, "--format", "markdown")...)
		require.Equal(t, exitOK, code, errs)
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("-j 1 and -j 3 differ\n--- -j 1 ---\n%s\n--- -j 3 ---\n%s", outs[0], outs[1])
	}
}

func TestSweepGolden(t *testing.T) {
	small := []string{"sweep", "--policy", "hermes-micro", "--profile", "coding-burst", "--sessions", "1",
		"--grid", "compression.micro_compact_every_n_turns=1,2,5", "--grid", "prompt_caching.cache_ttl=5m,1h"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"sweep.text", small},
		{"sweep.csv", append(small, "--format", "csv")},
		{"sweep-one-key.text", []string{"sweep", "--policy", "hermes-default", "--profile", "cron", "--sessions", "2",
			"--grid", "prompt_caching.layout=hermes,none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, c.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			goldenFile(t, c.name, out)
		})
	}
}

func TestSweepPlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	code, _, errs := runCmd(t, sweepArgs("--plots", dir)...)
	require.Equal(t, exitOK, code, errs)
	for _, f := range []string{"sweep-cost.svg", "sweep-cost.png", "sweep-hit-rate.svg", "sweep-hit-rate.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The numbers behind the heatmaps: cache_ttl in minutes on x.
	goldenFile(t, "sweep-cost-heat.txt", readFile(t, filepath.Join(dir, "sweep-cost.txt")))
	goldenFile(t, "sweep-hit-rate-heat.txt", readFile(t, filepath.Join(dir, "sweep-hit-rate.txt")))
}

func TestSweepUsage(t *testing.T) {
	grid := []string{"--profile", "cron", "--sessions", "1", "--grid", "prompt_caching.cache_ttl=5m,1h"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing policy", append([]string{"sweep"}, grid...), "--policy: sweep needs the base policy"},
		{"recorded", append([]string{"sweep", "--policy", "recorded"}, grid...), "--policy recorded"},
		{"two policies", append([]string{"sweep", "--policy", "hermes-default", "--policy", "hermes-micro"}, grid...), "one base policy"},
		{"unknown preset", append([]string{"sweep", "--policy", "no-such"}, grid...), `--policy "no-such"`},
		{"no grid", []string{"sweep", "--policy", "hermes-default"}, "--grid: want at least one"},
		{"bad key", []string{"sweep", "--policy", "hermes-default", "--grid", "compression.no_such=1,2"}, `unknown key "compression.no_such"`},
		{"bad value", []string{"sweep", "--policy", "hermes-default", "--grid", "prompt_caching.cache_ttl=5m,2h"}, "--grid prompt_caching.cache_ttl"},
		{"bad value named", []string{"sweep", "--policy", "hermes-default", "--grid", "prompt_caching.cache_ttl=5m,2h"}, "2h"},
		{"no values", []string{"sweep", "--policy", "hermes-default", "--grid", "prompt_caching.cache_ttl="}, "want key=v1,v2"},
		{"same value twice", []string{"sweep", "--policy", "hermes-default", "--grid", "compression.threshold=0.5,0.50"}, `values "0.5" and "0.50" are the same setting`},
		{"key twice", []string{"sweep", "--policy", "hermes-default", "--grid", "compression.threshold=0.5", "--grid", "compression.threshold=0.6"}, "key given twice"},
		{"key also set", []string{"sweep", "--policy", "hermes-default", "--set", "compression.threshold=0.5", "--grid", "compression.threshold=0.6,0.7"}, "also fixed by --set"},
		{"plots one key", append([]string{"sweep", "--policy", "hermes-default", "--plots", "figs"}, grid...), "exactly two --grid keys, got 1"},
		{"resume without out", append([]string{"sweep", "--policy", "hermes-default", "--resume"}, grid...), "--resume needs --out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, c.args...)
			if code != exitUsage || !strings.Contains(errs, c.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d naming %q", code, out, errs, exitUsage, c.want)
			}
		})
	}
}

func TestSweepHelp(t *testing.T) {
	code, out, _ := runCmd(t, "sweep", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:\n  ctxsim sweep --policy hermes-micro") || !strings.Contains(out, "--resume") {
		t.Errorf("sweep --help: exit %d\n%s", code, out)
	}
}

// BenchmarkSweep runs a 1-cell and a 16-cell sweep of 4 coding-burst
// sessions in-process on one worker. Token counts are memoized per process,
// so after the first iteration this is the replay cost alone; compare the
// two ns/op for what a cell costs on top of loading the workload.
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct {
		name  string
		cells int
		micro string
	}{
		{"cells=1", 1, "1"},
		{"cells=16", 16, "1,2,3,5,8,10,15,20"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ttl := "5m"
			if c.cells > 1 {
				ttl = "5m,1h"
			}
			args := []string{"sweep", "-j", "1", "--policy", "hermes-micro", "--profile", "coding-burst", "--sessions", "4",
				"--grid", "compression.micro_compact_every_n_turns=" + c.micro, "--grid", "prompt_caching.cache_ttl=" + ttl}
			for b.Loop() {
				var out, errb bytes.Buffer
				if code := run(args, strings.NewReader(""), &out, &errb); code != exitOK {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.cells), "ns/cell")
		})
	}
}

// TestSweepThresholdClamp: below a 512K window hermes raises the threshold
// to 0.75, so 0.5 and 0.7 give the same rows; the sweep says so for each
// clamped value, and not for 0.85.
func TestSweepThresholdClamp(t *testing.T) {
	code, out, errs := runCmd(t, "sweep", "--policy", "hermes-default", "--profile", "cron", "--sessions", "1",
		"--grid", "compression.threshold=0.5,0.7,0.85")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, errs, "warning: compression.threshold=0.5 acts as 0.75 on 1 of 1 sessions")
	require.Contains(t, errs, "warning: compression.threshold=0.7 acts as 0.75")
	require.NotContains(t, errs, "threshold=0.85 acts")
	require.Contains(t, out, "threshold=0.85")
	code, _, errs = runCmd(t, "compare", "--profile", "cron", "--sessions", "1", "--policy", "hermes-default", "--set", "compression.threshold=0.6")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, errs, "compression.threshold=0.6 acts as 0.75")
}

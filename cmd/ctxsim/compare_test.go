package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/stretchr/testify/require"
)

// The newcomer's first command: the embedded suite under every preset, one
// row per policy and one column per workload, the cheapest marked.
func TestCompareDefaultGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded suite")
	}
	code, out, errs := runCmd(t, "compare")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if errs != "" {
		t.Errorf("stderr %q: the first run on the project's own data warns of nothing", errs)
	}
	goldenFile(t, "compare-default.text", out)
	// Every workload column has a cheapest policy, and only the recorded
	// logs have a "recorded" cell.
	lines := strings.Split(out, "\n")
	if got := strings.Count(strings.Join(lines[1:], "\n"), " *"); got != 7 {
		t.Errorf("%d cells marked cheapest, want one per workload (7)", got)
	}
	for _, l := range lines {
		if f := strings.Fields(l); strings.HasPrefix(l, "recorded ") && len(f) != 2 && (len(f) != 3 || f[2] != "*") {
			t.Errorf("recorded row %q: want a cost in the logs column only", l)
		}
	}
}

// --detail gives the per-session table instead, with recorded figures.
func TestCompareDetail(t *testing.T) {
	code, out, errs := runCmd(t, "compare", "--trace", "../../testdata/claude-code/tool_heavy.jsonl", "--policy", "recorded", "--policy", "hermes-default")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	goldenFile(t, "compare-tool_heavy.text", out)
	if !strings.Contains(out, "recorded $") || !strings.Contains(out, "vs recorded %") {
		t.Errorf("per-session table lacks the recorded columns:\n%s", out)
	}
}

// TestCompareVLLM: --provider vllm runs with the documented GPU profile's
// KV cache by default, and a cache too small for the prompt (--kv-capacity
// 2000) loses nearly every hit.
func TestCompareVLLM(t *testing.T) {
	hit := func(args ...string) float64 {
		t.Helper()
		code, out, errs := runCmd(t, append([]string{"compare", "--provider", "vllm", "--profile", "coding-burst", "--sessions", "1",
			"--policy", "hermes-default", "--json"}, args...)...)
		require.Equal(t, exitOK, code, errs)
		var res struct {
			Runs []struct {
				HitRate float64 `json:"cache_hit_rate"`
			} `json:"runs"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.Len(t, res.Runs, 1)
		return res.Runs[0].HitRate
	}
	require.Greater(t, hit(), 0.8)
	require.Less(t, hit("--kv-capacity", "2000"), 0.1)
	code, _, errs := runCmd(t, "compare", "--provider", "vllm", "--kv-capacity", "8", "--block-size", "16", "--profile", "cron")
	require.Equal(t, exitUsage, code, errs)
}

// The workload table fits every terminal from 80 columns up, each line
// counted in characters ("…" is one), and its CSV holds only labels and
// numbers: the best-saves row is in percent by its label, as the hit-rate
// row is, not "17.8%" strings.
func TestCompareTableFitsAndCSV(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded suite")
	}
	ctx := context.Background()
	l, err := runner.Load(ctx, runner.Workload{PerProfile: runner.SuitePerProfile, Seed: 1})
	require.NoError(t, err)
	rn, err := runner.New(nil, "auto", 1)
	require.NoError(t, err)
	pols, err := runner.DefaultPolicies(nil)
	require.NoError(t, err)
	rp, err := runner.Compare(ctx, rn, l.Sessions, pols, runner.Options{Workers: 2})
	require.NoError(t, err)
	table := report.WorkloadTable(rp.Runs, rp.Workloads, rp.Policies)
	for width := 80; width <= 160; width += 10 {
		var b strings.Builder // as the CLI's stdout: the table fits its width
		require.NoError(t, table.Write(&report.Output{Writer: &b, Width: width}, report.Text))
		for _, line := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("COLUMNS=%d: a line of %d: %q", width, n, line)
			}
		}
	}
	var b strings.Builder
	require.NoError(t, table.Write(&b, report.CSV))
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(rows), 3)
	for _, row := range rows[1:] {
		for i, cell := range row[1:] {
			mark := strings.HasSuffix(rows[0][i+1], " mark")
			if _, err := strconv.ParseFloat(cell, 64); cell != "" && err != nil && !(mark && (cell == "*" || cell == "!")) {
				t.Errorf("row %q, column %q: %q is neither a number nor a mark", row[0], rows[0][i+1], cell)
			}
		}
	}
}

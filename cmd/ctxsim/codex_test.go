package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// codexLayouts is the synthetic rollouts of each layout a Codex rollout
// can take (traces/codex/testdata/layouts, issue 23).
const codexLayouts = "../../traces/codex/testdata/layouts"

func layoutDirs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(codexLayouts)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(codexLayouts, e.Name()))
		}
	}
	require.NotEmpty(t, out)
	return out
}

// What import codex writes, validate accepts, on every layout (a web
// search used to become a tool_use without an id).
func TestImportCodexValidates(t *testing.T) {
	for _, dir := range layoutDirs(t) {
		out := t.TempDir()
		code, _, errs := runCmd(t, "import", "codex", dir, "-o", out)
		require.Equal(t, exitOK, code, errs)
		files, err := filepath.Glob(filepath.Join(out, "*.jsonl"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		code, stdout, errs := runCmd(t, append([]string{"validate"}, files...)...)
		require.Equal(t, exitOK, code, "%s: %s%s", dir, stdout, errs)
	}
}

// A forked rollout bills its own calls only, parent present or not, each
// on its own day. The figures are the fixture's token_counts by hand
// (gpt-5.4: $2.50, $0.25 cached, $15 output per MTok): the parent's five
// calls, 12,666 input, 39,296 read and 506 output tokens, $0.049079 on
// July 1; the fork's two, 9,376, 9,216 and 191, $0.028609 on July 2.
// ccusage 20.0.24 (ccusage codex daily --offline --json -z UTC) reports
// the same; it is compared when it is on the PATH. Before, ctxsim billed
// the fork's copy of the parent's history again, $0.077688 on July 2.
func TestCostCodexFork(t *testing.T) {
	dir := filepath.Join(codexLayouts, "fork")
	g := costGroups(t, "--by", "day", "--timezone", "UTC", dir)
	require.Len(t, g.Groups, 2)
	require.Equal(t, "2026-07-01", g.Groups[0].Key)
	require.InDelta(t, 0.049079, g.Groups[0].CostUSD, 1e-9)
	require.Equal(t, 5, g.Groups[0].Requests)
	require.Equal(t, "2026-07-02", g.Groups[1].Key)
	require.InDelta(t, 0.028609, g.Groups[1].CostUSD, 1e-9)
	require.Equal(t, 2, g.Groups[1].Requests)
	fork, err := filepath.Glob(filepath.Join(dir, "sessions", "2026", "07", "02", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, fork, 1)
	alone := costGroups(t, "--timezone", "UTC", fork[0])
	require.InDelta(t, 0.028609, alone.Totals.CostUSD, 1e-9, "without the parent: the fork's own calls")
	require.Equal(t, 2, alone.Totals.Requests)

	bin, err := exec.LookPath("ccusage")
	if err != nil {
		t.Log("ccusage is not on the PATH (npm install ccusage@20.0.24): compared with the figures above only")
		return
	}
	home := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(home, "sessions"), os.DirFS(filepath.Join(dir, "sessions"))))
	cmd := exec.Command(bin, "codex", "daily", "--offline", "--json", "-z", "UTC")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	out, err := cmd.Output()
	require.NoError(t, err)
	var cc struct {
		Daily []struct {
			Date    string  `json:"date"`
			CostUSD float64 `json:"costUSD"`
		} `json:"daily"`
	}
	require.NoError(t, json.Unmarshal(out, &cc))
	require.Len(t, cc.Daily, 2)
	for i, d := range cc.Daily {
		require.Equal(t, g.Groups[i].Key, d.Date)
		require.InDelta(t, d.CostUSD, g.Groups[i].CostUSD, 1e-9, d.Date)
	}
}

// The observed replay of every Codex session, the layouts' and the
// corpus's, is within ±2 % of its bill, and fidelity prints the Codex
// sessions' own distribution when other formats are there too.
func TestFidelityCodex(t *testing.T) {
	check := func(paths ...string) {
		rep := fidelityJSON(t, paths...)
		require.NotEmpty(t, rep.Sessions)
		for _, s := range rep.Sessions {
			t.Logf("%s %s: observed %+.2f%%, recorded %+.2f%%", s.Format, s.Trace, s.ObservedErrorPct, s.ErrorPct)
			require.LessOrEqual(t, math.Abs(s.ObservedErrorPct), 2.0, "%s (%v)", s.Trace, paths)
		}
	}
	for _, dir := range layoutDirs(t) {
		check(dir)
	}
	const corpus = "../../../shared/traces/corpus"
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("the training corpus is not here (../shared/traces/corpus); .ci/run has it")
	}
	repos := []string{"CryptoSodi+Battle-Cities", "anmol0b+Trezo-Ai", "kunalcode12+Empire-of-bits-vorld"}
	var paths []string
	for _, r := range repos {
		paths = append(paths, filepath.Join(corpus, r))
	}
	check(paths...)
	// Beside Claude Code logs, the Codex sessions get their own rows.
	code, out, errs := runCmd(t, append([]string{"fidelity", "../../testdata/claude-code"}, paths...)...)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "format: codex")
	require.Regexp(t, `format: claude-code +4 `, out)
	require.True(t, strings.Contains(out, "version: codex 0.1"), out)
}

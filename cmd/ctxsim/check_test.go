package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const checkResultsFile = "testdata/check-results.json"

func TestCheckPasses(t *testing.T) {
	code, out, errs := runCmd(t, "check", "--baseline", checkResultsFile, "--results", checkResultsFile)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	goldenFile(t, "check-pass.text", out)
}

// A baseline that claims a higher hit rate than the results have fails the
// check and names the cell.
func TestCheckRegression(t *testing.T) {
	md := filepath.Join(t.TempDir(), "summary.md")
	code, out, errs := runCmd(t, "check", "--baseline", "testdata/check-baseline-regressed.json", "--results", checkResultsFile, "--markdown", md)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", code, exitFailure, errs)
	}
	if !strings.Contains(errs, "coding-burst-1 · claude-code cache_hit_rate") {
		t.Errorf("stderr does not name the regressed cell: %q", errs)
	}
	goldenFile(t, "check-regressed.text", out)
	goldenFile(t, "check-regressed.stderr", errs)
	got, err := os.ReadFile(md)
	require.NoError(t, err)
	goldenFile(t, "check-regressed.md", string(got))

	code, out, _ = runCmd(t, "check", "--baseline", "testdata/check-baseline-regressed.json", "--results", checkResultsFile, "--changed")
	if code != exitFailure {
		t.Errorf("--changed: exit %d", code)
	}
	goldenFile(t, "check-regressed-changed.text", out)

	// A tolerance wide enough to absorb the 1.88pp drop passes.
	code, _, errs = runCmd(t, "check", "--baseline", "testdata/check-baseline-regressed.json", "--results", checkResultsFile,
		"--tolerance", "cache_hit_rate=2pp")
	if code != exitOK {
		t.Errorf("with cache_hit_rate=2pp: exit %d: %s", code, errs)
	}
}

func TestCheckFormats(t *testing.T) {
	for _, f := range []string{"json", "markdown", "csv"} {
		code, out, errs := runCmd(t, "check", "--baseline", "testdata/check-baseline-regressed.json", "--results", checkResultsFile, "--format", f)
		if code != exitFailure {
			t.Fatalf("--format %s: exit %d: %s", f, code, errs)
		}
		goldenFile(t, "check-regressed."+f, out)
	}
}

func TestCheckUpdate(t *testing.T) {
	base := filepath.Join(t.TempDir(), "baseline.json")
	code, out, errs := runCmd(t, "check", "--baseline", base, "--results", checkResultsFile, "--update")
	if code != exitOK || !strings.Contains(out, "3 cells") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	// New cells pass a check, so an update that wrote no cells would pass
	// the plain re-check: the written file must hold every cell, equal.
	code, out, errs = runCmd(t, "check", "--baseline", base, "--results", checkResultsFile)
	if want := "3 cells compared, 0 regressions, 0 improvements, 0 missing, 0 new"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("check against the updated baseline: exit %d, want %q in:\n%s%s", code, want, out, errs)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(base), ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestCheckMissingCell(t *testing.T) {
	dir := t.TempDir()
	cur := filepath.Join(dir, "cur.json")
	data, err := os.ReadFile(checkResultsFile)
	require.NoError(t, err)
	// Drop the all-day cell from the results.
	s := string(data)
	i := strings.Index(s, `,
    {"trace": "all-day-7"`)
	require.Positive(t, i)
	require.NoError(t, os.WriteFile(cur, []byte(s[:i]+"\n  ]\n}\n"), 0o644))
	code, _, errs := runCmd(t, "check", "--baseline", checkResultsFile, "--results", cur)
	if code != exitFailure || !strings.Contains(errs, "all-day-7 · claude-code (missing)") {
		t.Errorf("missing cell: exit %d, stderr %q", code, errs)
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{
		{"check"},
		{"check", "--baseline", checkResultsFile, "--results", checkResultsFile, "--tolerance", "cost=lots"},
		{"check", "--baseline", checkResultsFile, "--results", checkResultsFile, "--tolerance", "speed=1%"},
		{"check", "--baseline", checkResultsFile, "--results", checkResultsFile, "--format", "yaml"},
		{"check", "--baseline", checkResultsFile, "stray"},
	} {
		if code, _, _ := runCmd(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	code, _, errs := runCmd(t, "check", "--baseline", "testdata/no-such.json", "--results", checkResultsFile)
	if code != exitFailure || !strings.Contains(errs, "--update") {
		t.Errorf("missing baseline: exit %d, stderr %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"runs": [`), 0o644))
	if code, _, errs := runCmd(t, "check", "--baseline", bad, "--results", checkResultsFile); code != exitUsage || !strings.Contains(errs, bad) {
		t.Errorf("truncated baseline: exit %d, stderr %q", code, errs)
	}
}

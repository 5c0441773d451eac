package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

func TestGenList(t *testing.T) {
	code, out, _ := runCmd(t, "gen", "--list")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, p := range []string{"all-day", "coding-burst", "cron", "multilingual", "review", "subagents"} {
		if !strings.Contains(out, p+" ") {
			t.Errorf("--list misses %s:\n%s", p, out)
		}
	}
}

func TestGenWritesSameBytes(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		code, out, errs := runCmd(t, "gen", "--profile", "subagents", "--sessions", "1", "--seed", "3", "-o", dir)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "subagents-3-0.jsonl") {
			t.Errorf("output does not name the parent file:\n%s", out)
		}
	}
	files, err := filepath.Glob(filepath.Join(a, "*.jsonl"))
	require.NoError(t, err)
	if len(files) < 3 {
		t.Fatalf("%d files, want a parent and at least 2 children", len(files))
	}
	for _, f := range files {
		x, err := os.ReadFile(f)
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		require.NoError(t, err)
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", filepath.Base(f))
		}
		if _, err := traces.ReadSession(bytes.NewReader(x), f); err != nil {
			t.Errorf("read back: %v", err)
		}
	}
	tmp, _ := filepath.Glob(filepath.Join(a, ".*tmp*"))
	if len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestGenUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-o", dir},
		{"--profile", "nope", "-o", dir},
		{"--profile", "cron"},
		{"--profile", "cron", "-o", dir, "--sessions", "0"},
		{"--profile", "cron", "-o", dir, "--length", "-1"},
		{"--profile", "cron", "-o", dir, "--start", "yesterday"},
	} {
		if code, _, errs := runCmd(t, append([]string{"gen"}, args...)...); code != exitUsage || errs == "" {
			t.Errorf("gen %v: exit %d, stderr %q; want exit 2 with a message", args, code, errs)
		}
	}
}

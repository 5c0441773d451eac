package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPoliciesList(t *testing.T) {
	code, out, _ := runCmd(t, "policies")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"no-compaction    compression.enabled=false",
		"hermes-micro     compression.micro_compact=true",
		"prune-on-resume  compression.idle_compact_after_seconds=300 compression.idle_action=prune",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCmd(t, "policies", "--json")
	require.Equal(t, exitOK, code)
	var rows []struct {
		Name    string `json:"name"`
		Changes []struct{ Key, Value string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	if len(rows) != 9 || rows[3].Name != "hermes-prune" || rows[3].Changes[0].Value != "48000" {
		t.Errorf("--json rows = %+v", rows)
	}
}

func TestPoliciesShow(t *testing.T) {
	code, out, _ := runCmd(t, "policies", "hermes-micro", "--set", "compression.micro_compact_every_n_turns=3", "--format", "csv")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"compression.micro_compact,true\n", "compression.micro_compact_every_n_turns,3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("display:\n  compact: true\ncompression:\n  threshold: 0.6\n"), 0o644))
	code, out, errs := runCmd(t, "policies", "--config", cfg)
	require.Equal(t, exitOK, code)
	if !strings.Contains(out, "compression.threshold                              0.6") {
		t.Errorf("--config output:\n%s", out)
	}
	if !strings.Contains(errs, `config.yaml:1: ignored section "display"`) {
		t.Errorf("stderr lacks the ignored-section warning: %q", errs)
	}
}

func TestPoliciesBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"policies", "hermes-turbo"}, exitUsage, `preset: want one of`},
		{[]string{"policies", "hermes-micro", "--set", "compression.threshold=2"}, exitUsage, `compression.threshold: want a number in (0, 1], got "2"`},
		{[]string{"policies", "hermes-micro", "--set", "threshold"}, exitUsage, `want KEY=VALUE`},
		{[]string{"policies", "--set", "a=b"}, exitUsage, `--set needs a preset NAME or --config`},
		{[]string{"policies", "--config", "no/such/file.yaml"}, exitFailure, "no such file"},
	} {
		code, _, errs := runCmd(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
}

// A policy file's ignored keys are warned of wherever the file is a
// --policy (compare, run, sweep, whatif), as ctxsim policies --config does; they
// used to be dropped silently.
func TestPolicyFileWarnings(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("compression:\n  threshold: 0.8\n  bogus_key: 3\n"), 0o644))
	traces := filepath.Join(dir, "traces") // gen writes a directory
	code, _, errs := runCmd(t, "gen", "--profile", "cron", "--sessions", "1", "-o", traces)
	require.Equal(t, exitOK, code, errs)
	for _, args := range [][]string{
		{"compare", "--profile", "cron", "--sessions", "1", "--policy", cfg},
		{"run", traces, "--policy", cfg},
		{"sweep", "--profile", "cron", "--sessions", "1", "--policy", cfg, "--grid", "compression.threshold=0.8,0.9"},
		{"whatif", "../../testdata/claude-code/tool_heavy.jsonl", "--policy", cfg},
	} {
		code, _, errs := runCmd(t, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errs)
		require.Contains(t, errs, "warning: "+cfg+":3: ignored unknown key compression.bogus_key", "%v", args)
	}
}

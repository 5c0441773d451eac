package main

import (
	"encoding/json"
	"strings"
	"testing"

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

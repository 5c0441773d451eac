package main

import (
	"strings"
	"testing"
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

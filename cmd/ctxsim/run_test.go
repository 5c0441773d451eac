package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/traces"
)

func runJSON(t *testing.T, args ...string) results.Summary {
	t.Helper()
	code, out, errs := runCmd(t, args...)
	require.Equal(t, exitOK, code, errs)
	var res results.Summary
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	return res
}

// The recorded policy reproduces what Anthropic billed for each shared
// Claude Code session. The three small sessions meet the targets;
// the large one misses two of them for reasons the log cannot show (see
// the README's fidelity section): a cache break at 21:03:30 with no cause in
// the log costs it about -4.6 pp of cost, and ~5.7K tokens Claude Code
// restores after its compaction are invisible to the open-loop sizing.
func TestFidelityOnSharedSessions(t *testing.T) {
	type want struct {
		calls            int
		costLo, costHi   float64
		readMatch        float64
		mdapeMax, p90Max float64
		olCallsMin       int
	}
	cases := map[string]want{
		"short.jsonl":      {calls: 1, costLo: -2, costHi: 2, readMatch: 95},
		"tool_heavy.jsonl": {calls: 4, costLo: -2, costHi: 2, readMatch: 95, mdapeMax: 3, p90Max: 8, olCallsMin: 3},
		"subagent.jsonl":   {calls: 12, costLo: -2, costHi: 2, readMatch: 95, mdapeMax: 3, p90Max: 8, olCallsMin: 9},
		// The measured misses, pinned so that a change shows.
		// (with its two subagents; the re-send at 21:03:30 is the miss).
		"4d5611e5-241a-462a-8d15-5122611a9569.jsonl": {calls: 152, costLo: -5.5, costHi: -4.0, readMatch: 97, mdapeMax: 4.5, p90Max: 8, olCallsMin: 100},
	}
	for file, w := range cases {
		t.Run(file, func(t *testing.T) {
			res := runJSON(t, "run", "--trace", "../../testdata/claude-code/"+file, "--policy", "recorded", "--json")
			require.Len(t, res.Runs, 1)
			f := res.Runs[0].Fidelity
			require.NotNil(t, f, "recorded runs carry a fidelity block")
			if f.Calls != w.calls {
				t.Errorf("calls = %d, want %d", f.Calls, w.calls)
			}
			if f.CostPct < w.costLo || f.CostPct > w.costHi {
				t.Errorf("cost_pct = %.2f, want in [%v, %v]", f.CostPct, w.costLo, w.costHi)
			}
			if f.ReadMatchPct < w.readMatch {
				t.Errorf("read_match_pct = %.1f, want ≥ %v", f.ReadMatchPct, w.readMatch)
			}
			if f.OpenLoopCalls < w.olCallsMin {
				t.Errorf("open_loop_calls = %d, want ≥ %d", f.OpenLoopCalls, w.olCallsMin)
			}
			if w.olCallsMin > 0 && (f.OpenLoopMdAPE > w.mdapeMax || f.OpenLoopP90 > w.p90Max) {
				t.Errorf("open loop mdape %.2f p90 %.2f, want ≤ %v and ≤ %v", f.OpenLoopMdAPE, f.OpenLoopP90, w.mdapeMax, w.p90Max)
			}
			if f.OpenLoopP90 < f.OpenLoopMdAPE {
				t.Errorf("p90 %.2f below the median %.2f", f.OpenLoopP90, f.OpenLoopMdAPE)
			}
		})
	}
}

// run prints recorded and simulated figures side by side; the numbers are
// pinned in a golden file.
func TestRunRecordedGolden(t *testing.T) {
	code, out, errs := runCmd(t, "run", "--trace", "../../testdata/claude-code/tool_heavy.jsonl")
	require.Equal(t, exitOK, code, errs)
	goldenFile(t, "run-tool_heavy.text", out)
	for _, s := range []string{"recorded tokens", "cache write 1h", "cache hit rate"} {
		if !strings.Contains(out, s) {
			t.Errorf("run output lacks %q", s)
		}
	}
}

// The recorded totals of a replay are what cost reads from the same
// files: the session file and its subagents (run replays a session with
// them), as ccusage counts them over the project directory.
func TestRunRecordedTotals(t *testing.T) {
	const file = "../../testdata/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
	res := runJSON(t, "run", "--trace", file, "--json")
	rec := res.Runs[0].Recorded
	require.NotNil(t, rec)
	code, out, errs := runCmd(t, "cost", "--json", file, strings.TrimSuffix(file, ".jsonl")+"/subagents")
	require.Equal(t, exitOK, code, errs)
	var cost struct {
		Total struct {
			Tokens  traces.Usage `json:"tokens"`
			CostUSD float64      `json:"cost_usd"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cost), out)
	require.Equal(t, cost.Total.Tokens, rec.Tokens)
	if math.Abs(rec.CostUSD-cost.Total.CostUSD) > 1e-5 {
		t.Errorf("recorded cost $%.4f, cost says $%.4f", rec.CostUSD, cost.Total.CostUSD)
	}
	// Claude Code compacted once at 170K tokens: the replay counts it and
	// prices what it did to the cache.
	r := res.Runs[0]
	if r.Compactions.Batch != 1 || r.TokensShed < 100_000 || len(r.CacheDamage) != 1 {
		t.Errorf("compactions %+v, shed %d, damage %d entries: want the one recorded compaction shedding >100K tokens",
			r.Compactions, r.TokensShed, len(r.CacheDamage))
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"run", "--trace", "a", "--trace", "b"},
		{"run", "--trace", "../../testdata/claude-code/short.jsonl", "--policy", "no-such-preset"},
		{"run", "--trace", "../../testdata/claude-code/short.jsonl", "--format", "xml"},
	} {
		if code, _, _ := runCmd(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// whatif on the shared directory prints the recorded cost, the replay and
// every default policy, and the 5m variant of a 5m session is its replay.
func TestWhatifShared(t *testing.T) {
	code, out, errs := runCmd(t, "whatif", "../../testdata/claude-code", "--json")
	require.Equal(t, exitOK, code, errs)
	var rep results.WhatifReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Sessions, 4)
	for _, s := range rep.Sessions {
		require.NotNil(t, s.RecordedUSD, s.ID)
		if len(s.Policies) != len(runner.Variants()) {
			t.Errorf("%s: %d policies, want %d", s.ID, len(s.Policies), len(runner.Variants()))
		}
		if s.ID == "4d5611e5-241a-462a-8d15-5122611a9569" {
			for _, p := range s.Policies {
				if p.Policy == "ttl-5m" && math.Abs(p.CostUSD-s.ReplayUSD) > 1e-6 {
					t.Errorf("ttl-5m of a 5m session costs %.6f, its replay %.6f", p.CostUSD, s.ReplayUSD)
				}
				if p.Policy == "prune-on-resume" && p.SavingsUSD <= 0 {
					t.Errorf("prune-on-resume saves %.4f on a session with a 19-minute and a 4-hour idle gap", p.SavingsUSD)
				}
			}
		}
	}
	code, text, _ := runCmd(t, "whatif", "../../testdata/claude-code")
	require.Equal(t, exitOK, code)
	goldenFile(t, "whatif-shared.text", text)
}

// whatif's --policies errors say what is wrong with the name given: an
// unknown name lists the variants, a policy file that cannot be read or a
// bad --set says so.
func TestWhatifPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policies", "no-such"}, "not a whatif variant (ttl-5m"},
		{[]string{"--policies", "missing.yaml"}, "--policy missing.yaml: open missing.yaml"},
		{[]string{"--policies", "hermes-default", "--set", "compression.threshold=7"}, "--set compression.threshold=7:"},
		{[]string{"--policies", "ttl-1h", "--set", "compression.threshold"}, `--set "compression.threshold": want KEY=VALUE`},
	} {
		code, _, errs := runCmd(t, append([]string{"whatif", "../../testdata/claude-code/short.jsonl"}, tc.args...)...)
		if code == exitOK || !strings.Contains(errs, tc.want) {
			t.Errorf("whatif %v: exit %d, stderr %q; want %q", tc.args, code, errs, tc.want)
		}
	}
}

// A session imported to the native format replays exactly as the log it
// came from: the native format loses nothing the simulation uses.
func TestImportedReplaysAsTheLog(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCmd(t, "import", "claude-code", "../../testdata/claude-code/tool_heavy.jsonl", "-o", dir)
	require.Equal(t, exitOK, code, errs)
	direct := runJSON(t, "run", "--trace", "../../testdata/claude-code/tool_heavy.jsonl", "--json")
	native := runJSON(t, "run", "--trace", dir+"/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl", "--json")
	a, b := direct.Runs[0], native.Runs[0]
	if a.CostUSD != b.CostUSD || a.Tokens != b.Tokens || *a.Fidelity != *b.Fidelity {
		t.Errorf("log replay %+v %+v\nnative replay %+v %+v", a.Tokens, *a.Fidelity, b.Tokens, *b.Fidelity)
	}
	code, out, errs := runCmd(t, "validate", dir+"/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl")
	if code != exitOK {
		t.Errorf("validate: exit %d: %s %s", code, out, errs)
	}
}

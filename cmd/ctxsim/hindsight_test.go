package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces/codex"
)

// checkHindsight runs whatif on path and checks, per session, that the
// hindsight optimum is at most the replay's cost and at most every TTL
// variant's (the priced policies that keep the recorded transcript), and
// that the regrets are consistent with it.
func checkHindsight(t *testing.T, path string) {
	t.Helper()
	code, out, errs := runCmd(t, "whatif", path, "--json")
	require.Equal(t, exitOK, code, errs)
	var rep results.WhatifReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotEmpty(t, rep.Sessions)
	const tol = 2e-6 // the report rounds to 1e-6
	for _, s := range append(rep.Sessions, rep.Totals) {
		require.NotNil(t, s.HindsightUSD, "%s: no hindsight_usd", s.ID)
		h := *s.HindsightUSD
		if h > s.ReplayUSD+tol || h < 0 {
			t.Errorf("%s: hindsight $%.6f, replay $%.6f", s.ID, h, s.ReplayUSD)
		}
		if d := s.ReplayUSD - h - *s.ReplayRegretUSD; d > tol || d < -tol {
			t.Errorf("%s: replay regret $%.6f, want replay − hindsight", s.ID, *s.ReplayRegretUSD)
		}
		for _, p := range s.Policies {
			require.NotNil(t, p.RegretUSD, "%s/%s", s.ID, p.Policy)
			if strings.HasPrefix(p.Policy, "ttl-") && h > p.CostUSD+tol {
				t.Errorf("%s: hindsight $%.6f above %s's $%.6f", s.ID, h, p.Policy, p.CostUSD)
			}
		}
	}
	t.Logf("%s: %d sessions, replay $%.2f, hindsight $%.2f", path, len(rep.Sessions), rep.Totals.ReplayUSD, *rep.Totals.HindsightUSD)
}

func TestHindsightShared(t *testing.T) {
	checkHindsight(t, "../../testdata/claude-code")
}

// TestHindsightCorpus checks every Claude Code repository of the training
// corpus (../shared/traces/corpus), one whatif per repository.
func TestHindsightCorpus(t *testing.T) {
	const corpus = "../../../shared/traces/corpus"
	if testing.Short() {
		t.Skip("the corpus replay takes minutes; run without -short")
	}
	dirs, err := os.ReadDir(corpus)
	if err != nil {
		t.Skipf("no training corpus at %s (it is not part of the repository): %v", corpus, err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(corpus, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			if codexOnly(t, dir) {
				t.Skip("Codex rollouts: the hindsight optimum prices Anthropic's breakpoint schedules only")
			}
			// Repositories of hermes state.db files carry session totals
			// only: nothing to replay call by call.
			code, _, errs := runCmd(t, "whatif", dir, "--json", "--no-hindsight", "--policies", "ttl-1h")
			if code != exitOK {
				for _, why := range []string{"no recorded usage", "no sessions found", "no .jsonl files"} {
					if strings.Contains(errs, why) {
						t.Skipf("no replayable recorded calls: %s", strings.TrimSpace(errs))
					}
				}
			}
			checkHindsight(t, dir)
		})
	}
}

// run --hindsight lists every request with both schedules; the optimum
// bills no more than the policy on each run and in total.
func TestRunHindsight(t *testing.T) {
	code, out, errs := runCmd(t, "run", "--trace", "../../testdata/claude-code/tool_heavy.jsonl", "--hindsight", "--json")
	require.Equal(t, exitOK, code, errs)
	var doc struct {
		Runs []struct {
			CostUSD   float64 `json:"cost_usd"`
			Hindsight struct {
				CostUSD float64 `json:"hindsight_usd"`
				Exact   bool    `json:"exact"`
			} `json:"hindsight"`
		} `json:"runs"`
		Schedule []report.ScheduleCall `json:"hindsight_schedule"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Runs, 1)
	require.Len(t, doc.Schedule, 5) // the prewarm and four calls
	differ, pol, best := 0, 0.0, 0.0
	for _, c := range doc.Schedule {
		if c.Differs {
			differ++
		}
		pol += c.PolicyUSD
		best += c.BestUSD
	}
	if differ == 0 || best >= pol {
		t.Errorf("%d calls differ, optimum $%.4f vs policy $%.4f: want a cheaper, different schedule", differ, best, pol)
	}
	r := doc.Runs[0]
	if !r.Hindsight.Exact || r.Hindsight.CostUSD > r.CostUSD || r.CostUSD-r.Hindsight.CostUSD-(pol-best) > 1e-5 {
		t.Errorf("run $%.4f, hindsight %+v; schedule saves $%.4f", r.CostUSD, r.Hindsight, pol-best)
	}
	code, out, _ = runCmd(t, "run", "--trace", "../../testdata/claude-code/tool_heavy.jsonl", "--hindsight")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "hindsight breakpoints")
	require.Contains(t, out, "proven")
}

// breakeven --hindsight says what the optimum did at the large session's
// two idle gaps: nothing survives 4 hours; 19 minutes are bridged at 1h.
func TestBreakevenHindsight(t *testing.T) {
	code, out, errs := runCmd(t, "breakeven", "--hindsight", "--json", "../../testdata/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
	require.Equal(t, exitOK, code, errs)
	var rep results.BreakevenReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Gaps, 2)
	if g := rep.Gaps[0]; g.Choice != "none" || g.IdleMin < 240 {
		t.Errorf("first gap %+v, want none after ~4 h", g)
	}
	if g := rep.Gaps[1]; g.Choice != "1h" || g.Read <= g.PolicyRead {
		t.Errorf("second gap %+v, want 1h reading more than the recorded schedule", g)
	}
}

// codexOnly reports whether every .jsonl log under dir is a Codex rollout.
func codexOnly(t *testing.T, dir string) bool {
	t.Helper()
	n := 0
	all := true
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n++
		all = all && codex.IsRollout(f)
		return nil
	})
	require.NoError(t, err)
	return n > 0 && all
}

// run FILE --policy recorded-observed and whatif FILE replay one session
// the same way (one account, the same baseline), so they report the same
// hindsight optimum for it: whatif's is the baseline cell's, run's its
// only cell's.
func TestRunWhatifHindsightAgree(t *testing.T) {
	files, err := filepath.Glob("../../testdata/claude-code/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		code, out, errs := runCmd(t, "run", f, "--policy", "recorded-observed", "--json")
		require.Equal(t, exitOK, code, errs)
		var doc struct {
			Runs []struct {
				Trace     string `json:"trace"`
				Hindsight *struct {
					CostUSD float64 `json:"hindsight_usd"`
				} `json:"hindsight"`
			} `json:"runs"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc))
		code, out, errs = runCmd(t, "whatif", f, "--json")
		require.Equal(t, exitOK, code, errs)
		var rep results.WhatifReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, doc.Runs, len(rep.Sessions), f)
		for i, r := range doc.Runs {
			ws := rep.Sessions[i]
			require.Equal(t, r.Trace, ws.ID, f)
			require.NotNil(t, r.Hindsight, f)
			require.NotNil(t, ws.HindsightUSD, f)
			if d := r.Hindsight.CostUSD - *ws.HindsightUSD; d > 2e-6 || d < -2e-6 {
				t.Errorf("%s: run's optimum $%.6f, whatif's $%.6f", ws.ID, r.Hindsight.CostUSD, *ws.HindsightUSD)
			}
		}
	}
}

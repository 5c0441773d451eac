package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/report"
)

// checkHindsight runs whatif on path and checks, per session, that the
// hindsight optimum is at most the replay's cost and at most every TTL
// variant's (the priced policies that keep the recorded transcript), and
// that the regrets are consistent with it.
func checkHindsight(t *testing.T, path string) {
	t.Helper()
	code, out, errs := runCmd(t, "whatif", path, "--json")
	require.Equal(t, exitOK, code, errs)
	var rep report.WhatifReport
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
			// Repositories of hermes state.db files carry session totals
			// only: nothing to replay call by call.
			code, _, errs := runCmd(t, "whatif", dir, "--json", "--no-hindsight", "--policies", "ttl-1h")
			if code != exitOK && strings.Contains(errs, "no recorded usage") || strings.Contains(errs, "no sessions found") {
				t.Skipf("no replayable recorded calls: %s", strings.TrimSpace(errs))
			}
			checkHindsight(t, dir)
		})
	}
}

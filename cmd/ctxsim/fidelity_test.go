package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/results"
	"github.com/stretchr/testify/require"
)

func fidelityJSON(t *testing.T, paths ...string) results.FidelityReport {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"fidelity", "--json"}, paths...)...)
	require.Equal(t, 0, code, errs)
	var rep results.FidelityReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

// The four shared sessions: every bill reproduced, and the one session
// with an unexplained re-send (4d5611e5 at 21:03:30) attributed to it.
func TestFidelityShared(t *testing.T) {
	rep := fidelityJSON(t, "../../testdata/claude-code")
	require.Len(t, rep.Sessions, 4)
	require.Equal(t, "4d5611e5-241a-462a-8d15-5122611a9569", rep.Sessions[0].Trace, "worst first")
	require.Equal(t, results.CauseResends, rep.Sessions[0].Cause)
	require.Less(t, rep.Sessions[0].ErrorPct, -3.0, "the default replay misses the re-send")
	require.InDelta(t, 0, rep.Sessions[0].ObservedErrorPct, 1, "recorded-observed honours it")
	require.InDelta(t, 11.00, rep.Recorded.RecordedUSD, 0.01)
	require.LessOrEqual(t, rep.Observed.MedianAbsPct, 1.0)
	require.Equal(t, 1.0, rep.Observed.Within2Pct)
	require.GreaterOrEqual(t, rep.ReadMatchPct, 95.0)

	code, out, _ := runCmd(t, "fidelity", "../../testdata/claude-code")
	require.Equal(t, 0, code)
	for _, want := range []string{"Worst sessions", "Fidelity over 4 sessions", "recorded", "observed", "call-weighted read match"} {
		require.Contains(t, out, want)
	}
}

// A resumed file whose earlier session is absent: the calls the resume
// copied are that session's history, billed there. cost bills them here,
// as ccusage does (20 requests, $0.457), but fidelity's recorded side is the
// session's own calls, the ones the replay sends (it was $0.457 against a
// $0.18 replay: -61 %).
func TestFidelityResumeCopiesNotBilled(t *testing.T) {
	const resumed = "../../traces/claudecode/testdata/resume/77570c3a.jsonl"
	rep := fidelityJSON(t, resumed)
	require.Len(t, rep.Sessions, 1)
	s := rep.Sessions[0]
	require.Equal(t, 3, s.Calls, "the 17 copied calls are history")
	require.Less(t, s.RecordedUSD, 0.2)
	require.InDelta(t, 0, s.ObservedErrorPct, 2)
}

// Claude Code 1.0.x's per-turn thinking budget (claudecode.ThinkingBudget):
// in the trimmed corpus session (traces/claudecode/testdata/thinking), the
// turns that switch thinking on and off read only the tools and system
// prompt; without the rule the recorded replay read on and came out 9.2 %
// under the bill. It is now -1.3 %: the call at its second working-directory
// change reads as billed (run.envRead), which no longer offsets its first
// thinking switch, priced on the whole floor until a bill says where the
// system prompt ends (docs/fidelity.md, "What remains").
func TestFidelityThinkingBudget(t *testing.T) {
	rep := fidelityJSON(t, "../../traces/claudecode/testdata/thinking/5f2d5220.jsonl")
	require.Len(t, rep.Sessions, 1)
	require.InDelta(t, 0, rep.Sessions[0].ErrorPct, 1.5, "recorded")
	require.InDelta(t, 0, rep.Sessions[0].ObservedErrorPct, 1, "observed")
}

// Claude Code 2.1.19-2.1.37's typed skills send no thinking
// (claudecode.PromptBudget), so each switch between a skill's turn and a
// typed prompt's re-sends the messages and the unlogged first-message
// context (run.moveContext): in the trimmed corpus session
// (traces/claudecode/testdata/skills, 2.1.29), three turns read 35,891
// tokens, the tools and system prompt. Without the rules the recorded
// replay came out 31.3 % under the bill.
func TestFidelitySkillTurnsThinking(t *testing.T) {
	rep := fidelityJSON(t, "../../traces/claudecode/testdata/skills/6b7ca74d.jsonl")
	require.Len(t, rep.Sessions, 1)
	require.InDelta(t, 0, rep.Sessions[0].ErrorPct, 3, "recorded")
	require.InDelta(t, 0, rep.Sessions[0].ObservedErrorPct, 1, "observed")
	require.GreaterOrEqual(t, rep.Sessions[0].ReadMatchPct, 96.0)
}

// The training corpus (../shared/traces/corpus, 26 repos, 2025 and 2026
// logs, grown by two repos of compactions and resumed sessions in issue
// 22). The gate is re-based at what today's rules reach there (issue 22
// raises it as the rules land): a regression gate, not the target,
// which asks the recorded replay within ±2 % on 75 % of sessions: met on
// the Claude Code sessions' own line, not on the whole corpus (74 %). Last
// raised by the /effort, model-switch floor, system-end-on-any-model,
// final-output and account rules (read match 95.9 -> 97.1 %, recorded
// within 2 % 69 -> 74 %), and the observed replay serving a re-send read
// inside the floor (observed within 2 % 93 -> 95 %).
func TestFidelityCorpus(t *testing.T) {
	const corpus = "../../../shared/traces/corpus"
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("the training corpus is not here (../shared/traces/corpus); .ci/run has it")
	}
	if testing.Short() {
		t.Skip("-short: the corpus replay takes ~20 s")
	}
	rep := fidelityJSON(t, corpus)
	require.GreaterOrEqual(t, len(rep.Sessions), 100)
	require.Empty(t, rep.Skipped)
	t.Logf("recorded: total %+.2f%%, median %.2f%%, $-weighted %.2f%%, within 2%% %.0f%%, within 5%% %.0f%%",
		rep.Recorded.TotalErrorPct, rep.Recorded.MedianAbsPct, rep.Recorded.DollarWeightedPct, 100*rep.Recorded.Within2Pct, 100*rep.Recorded.Within5Pct)
	t.Logf("observed: total %+.2f%%, median %.2f%%, $-weighted %.2f%%, within 2%% %.0f%%, within 5%% %.0f%%",
		rep.Observed.TotalErrorPct, rep.Observed.MedianAbsPct, rep.Observed.DollarWeightedPct, 100*rep.Observed.Within2Pct, 100*rep.Observed.Within5Pct)
	t.Logf("read match %.1f%%, open-loop median %.2f%%", rep.ReadMatchPct, rep.OpenLoopMdAPE)
	require.GreaterOrEqual(t, rep.ReadMatchPct, 97.0, "call-weighted read match")
	require.LessOrEqual(t, rep.OpenLoopMdAPE, 3.0, "open-loop prompt error, median")
	require.LessOrEqual(t, rep.Recorded.MedianAbsPct, 0.50)
	// Issue 22's target; 74 % -> 75 % when a folder of one project's
	// sessions became one account (traces.GroupProjects: 6b7ca74d), 76 %
	// when an interrupted prompt's request cached it (fb4f7a6e).
	require.GreaterOrEqual(t, rep.Recorded.Within2Pct, 0.76)
	// 84 % -> 83 % when a session's first idle gap took its account's
	// bills (run.floorWarm): SWORDIntel 8bc71cde's gap is priced as
	// billed, and the two under-priced calls it offset show (-1.1 % ->
	// -7.2 %).
	require.GreaterOrEqual(t, rep.Recorded.Within5Pct, 0.82)
	require.LessOrEqual(t, abs(rep.Recorded.TotalErrorPct), 0.2, "recorded total error (the issue: within ±2 %)")
	// -0.05 % -> -0.11 % as the observed replay followed reads inside the
	// floor and interrupted prompts (each session nearer its bill; the
	// issue asks within ±1 %).
	require.LessOrEqual(t, abs(rep.Observed.TotalErrorPct), 0.15, "observed total error")
	// 95 % -> 96 %, 98 % -> 99 %, median 0.19 -> 0.17 % when an observed
	// read that ended inside a message kept only its nearer boundary
	// (sim.position: e6e50e7a, d9c38e64).
	// 96 % -> 98 %, 99 % -> 100 % when a read past the TTL that ended
	// inside the floor was served that read (provider.ObservedStep:
	// eca51c57, 132b2f66).
	require.GreaterOrEqual(t, rep.Observed.Within2Pct, 0.99, "observed within 2%")
	require.GreaterOrEqual(t, rep.Observed.Within5Pct, 1.0, "observed within 5%")
	require.LessOrEqual(t, rep.Observed.MedianAbsPct, 0.18)
	var cc *results.FidelityGroup
	for i := range rep.Groups {
		if g := &rep.Groups[i]; g.By == results.ByFormat && g.Name == "claude-code" {
			cc = g
		}
	}
	require.NotNil(t, cc, "the Claude Code sessions' own line")
	require.GreaterOrEqual(t, cc.Recorded.Within2Pct, 0.77, "Claude Code sessions, recorded within 2%")
	require.GreaterOrEqual(t, cc.Observed.Within2Pct, 0.99, "Claude Code sessions, observed within 2%")
	for _, s := range rep.Sessions {
		require.NotEmpty(t, s.Cause, s.Trace)
		require.False(t, strings.Contains(s.Trace, ".agent-side"), "inline sidechains are reported under their root: %s", s.Trace)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

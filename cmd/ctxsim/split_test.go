package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/report/columnar"
	"github.com/ctxsim/ctxsim/results"
)

// twoSessionAccount writes a directory of two sessions of one account:
// tool_heavy.jsonl and a copy of it with fresh ids, sent shift later. The
// copy's prompts are the original's, so both sessions' calls make and
// read the same cache entries.
func twoSessionAccount(t *testing.T, shift time.Duration) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/claude-code/tool_heavy.jsonl")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), b, 0o644))
	ts := regexp.MustCompile(`"timestamp":"([0-9T:.\-]+Z)"`)
	copied := ts.ReplaceAllStringFunc(string(b), func(m string) string {
		at, err := time.Parse(time.RFC3339Nano, ts.FindStringSubmatch(m)[1])
		require.NoError(t, err)
		return `"timestamp":"` + at.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z") + `"`
	})
	copied = regexp.MustCompile(`\b[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`).ReplaceAllString(copied, "bbbbbbbb$1")
	copied = strings.NewReplacer(`"msg_`, `"msg_B`, `"req_`, `"req_B`).Replace(copied)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(copied), 0o644))
	return dir
}

// scheduleMark is one breakpoint of a schedule column ("13@26,460 5m"):
// the token end it marks and what the call did there.
var scheduleMark = regexp.MustCompile(`\d+@([\d,]+) (read|5m|1h)`)

// The split of a joint optimum between the sessions of one account
// (docs/metrics.md): each call's bill under the joint schedule is its
// session's, so a session's hindsight_usd is its cost_usd less what its
// own calls billed under the policy plus what they bill under the joint
// schedule, and the sessions' figures add up to the joint optimum. run,
// whatif, compare and runs.parquet report the same split.
func TestJointOptimumSplit(t *testing.T) {
	dir := twoSessionAccount(t, 3*time.Second)
	out := t.TempDir()
	code, stdout, errs := runCmd(t, "run", dir, "--policy", "recorded-observed", "--hindsight", "--json", "--out", filepath.Join(out, "run"))
	require.Equal(t, exitOK, code, errs)
	var doc struct {
		Runs     []results.RunSummary  `json:"runs"`
		Schedule []report.ScheduleCall `json:"hindsight_schedule"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Runs, 2)

	// The account shares: some call reads an entry whose last writer, in
	// the joint schedule, was the other session's call.
	calls := append([]report.ScheduleCall(nil), doc.Schedule...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].Time < calls[j].Time })
	writer := map[string]string{} // token end → session that last wrote there
	cross := 0
	for _, c := range calls {
		for _, m := range scheduleMark.FindAllStringSubmatch(c.Hindsight, -1) {
			if c.Fixed {
				continue
			}
			if m[2] == "read" {
				if w := writer[m[1]]; w != "" && w != c.Session {
					cross++
				}
			} else {
				writer[m[1]] = c.Session
			}
		}
	}
	if cross == 0 {
		t.Fatalf("no call reads what the other session wrote; the test needs a shared entry:\n%+v", calls)
	}
	t.Logf("%d reads of the other session's writes", cross)

	// The rule, session by session, from the schedule's per-call bills
	// (rounded to 1e-6 each).
	const cent = 1e-6
	want := map[string]float64{}
	jointPolicy, jointBest, n := 0.0, 0.0, 0
	for _, c := range doc.Schedule {
		if c.Fixed {
			continue
		}
		jointPolicy += c.PolicyUSD
		jointBest += c.BestUSD
		want[c.Session] += c.BestUSD - c.PolicyUSD
		n++
	}
	tol := float64(n+1) * cent
	sumCost, sumHindsight := 0.0, 0.0
	got := map[string]float64{}
	for _, r := range doc.Runs {
		require.NotNil(t, r.Hindsight, r.Trace)
		h := r.Hindsight.CostUSD
		if d := h - (r.CostUSD + want[r.Trace]); math.Abs(d) > tol {
			t.Errorf("%s: hindsight $%.6f, want cost $%.6f less its calls' policy bill plus their joint-schedule bill ($%.6f)", r.Trace, h, r.CostUSD, r.CostUSD+want[r.Trace])
		}
		if h > r.CostUSD+cent {
			t.Errorf("%s: its share $%.6f is above its own replay $%.6f", r.Trace, h, r.CostUSD)
		}
		got[r.Trace] = h
		sumCost += r.CostUSD
		sumHindsight += h
	}
	if d := sumHindsight - (sumCost - jointPolicy + jointBest); math.Abs(d) > tol {
		t.Errorf("the sessions' optima sum to $%.6f, the joint optimum is $%.6f", sumHindsight, sumCost-jointPolicy+jointBest)
	}

	// whatif: the same per session, and the total is their sum.
	code, stdout, errs = runCmd(t, "whatif", dir, "--json", "--out", filepath.Join(out, "whatif"))
	require.Equal(t, exitOK, code, errs)
	var rep results.WhatifReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Sessions, 2)
	for _, s := range rep.Sessions {
		require.NotNil(t, s.HindsightUSD, s.ID)
		if d := *s.HindsightUSD - got[s.ID]; math.Abs(d) > 2*cent {
			t.Errorf("whatif %s: $%.6f, run $%.6f", s.ID, *s.HindsightUSD, got[s.ID])
		}
	}
	require.NotNil(t, rep.Totals.HindsightUSD)
	if d := *rep.Totals.HindsightUSD - sumHindsight; math.Abs(d) > 2*cent {
		t.Errorf("whatif total $%.6f, the sessions' sum $%.6f", *rep.Totals.HindsightUSD, sumHindsight)
	}

	// compare: the same runs.
	code, stdout, errs = runCmd(t, "compare", dir, "--policy", "recorded-observed", "--json", "--out", filepath.Join(out, "compare"))
	require.Equal(t, exitOK, code, errs)
	var sum results.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Len(t, sum.Runs, 2)
	for _, r := range sum.Runs {
		require.NotNil(t, r.Hindsight, r.Trace)
		if d := r.Hindsight.CostUSD - got[r.Trace]; math.Abs(d) > cent {
			t.Errorf("compare %s: $%.6f, run $%.6f", r.Trace, r.Hindsight.CostUSD, got[r.Trace])
		}
	}

	// runs.parquet of each: the baseline's rows carry the same figures.
	for _, cmd := range []string{"run", "whatif", "compare"} {
		path := filepath.Join(out, cmd, "runs.parquet")
		b, err := os.ReadFile(path)
		require.NoError(t, err, cmd)
		rows, err := columnar.Read[columnar.Run](strings.NewReader(string(b)), int64(len(b)))
		require.NoError(t, err, cmd)
		seen := 0
		for _, r := range rows {
			if r.Policy != "recorded-observed" {
				continue
			}
			seen++
			if r.HindsightUSD == nil || math.Abs(*r.HindsightUSD-got[r.Trace]) > 2*cent || r.HindsightRegretUSD == nil ||
				math.Abs(*r.HindsightRegretUSD-(r.CostUSD-got[r.Trace])) > 2*cent {
				t.Errorf("%s runs.parquet %s: hindsight %v, regret %v; run $%.6f", cmd, r.Trace, r.HindsightUSD, r.HindsightRegretUSD, got[r.Trace])
			}
		}
		if seen != 2 {
			t.Errorf("%s runs.parquet: %d baseline rows, want 2", cmd, seen)
		}
	}
}

package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
)

const (
	compactCapture = "../sim/assent/testdata/trace_compact_claude.json"
	codexCapture   = "../sim/assent/testdata/trace_codex.json"
)

func loadCapture(t *testing.T, path string) []*traces.Session {
	t.Helper()
	l, err := runner.Load(context.Background(), runner.Workload{Paths: []string{path}, From: "capture"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Sessions
}

// policyRuns are the runs of policy among runs.
func policyRuns(runs []results.RunSummary, policy string) []results.RunSummary {
	var out []results.RunSummary
	for _, r := range runs {
		if r.Policy == policy {
			out = append(out, r)
		}
	}
	return out
}

// compare on a capture takes the as-sent policy as any other: one row per
// session, each the replay of its exact requests, so on Claude Code's
// compaction capture (every call exact, sim/assent) each row's cost is its
// bill to the cent, and its tokens the bill's, class by class.
func TestCompareAsSentCapture(t *testing.T) {
	rn := setup(t)
	rn.Hindsight = false
	ss := loadCapture(t, compactCapture)
	rp, err := runner.Compare(context.Background(), rn, ss, []runner.Policy{runner.AsSentPolicy(), preset(t, "claude-code")}, runner.Options{Workers: 2, Records: true})
	if err != nil {
		t.Fatal(err)
	}
	runs := policyRuns(rp.Runs, assent.Name)
	if len(runs) != 8 {
		t.Fatalf("%d as-sent runs, want one per session (8)", len(runs))
	}
	calls, sum := 0, 0.0
	for _, r := range runs {
		if r.Recorded == nil || r.Error == nil {
			t.Fatalf("%s: no recorded side", r.Trace)
		}
		if r.Tokens.Input != r.Recorded.Tokens.Input || r.Tokens.CacheRead != r.Recorded.Tokens.CacheRead ||
			r.Tokens.CacheWrite5m != r.Recorded.Tokens.CacheWrite5m || r.Tokens.CacheWrite1h != r.Recorded.Tokens.CacheWrite1h {
			t.Errorf("%s: as-sent billed %+v, the capture %+v", r.Trace, r.Tokens, r.Recorded.Tokens)
		}
		if math.Abs(r.CostUSD-r.Recorded.CostUSD) > 1e-9 || r.Error.CostPct != 0 {
			t.Errorf("%s: as-sent $%.6f, billed $%.6f (%+.2f%%)", r.Trace, r.CostUSD, r.Recorded.CostUSD, r.Error.CostPct)
		}
		calls += r.Requests
		sum += r.CostUSD
	}
	if calls != 10 {
		t.Errorf("%d as-sent calls, want the capture's 10", calls)
	}
	// The bill of the file, as fidelity's as-sent row prices it.
	groups, err := runner.AsSent(context.Background(), rn, loadCapture(t, compactCapture))
	if err != nil || len(groups) != 1 {
		t.Fatalf("fidelity's as-sent groups %+v, %v", groups, err)
	}
	if math.Abs(sum-groups[0].RecordedUSD) > 1e-9 {
		t.Errorf("as-sent runs cost $%.6f, fidelity's capture row $%.6f", sum, groups[0].RecordedUSD)
	}
	n := 0
	for _, r := range rp.Records {
		if r.Policy == assent.Name {
			n++
			if r.Recorded == nil || r.Prompt != int(r.Usage.Prompt()) || r.Window == 0 {
				t.Errorf("record %s/%d: prompt %d, usage %+v, window %d", r.Trace, r.Seq, r.Prompt, r.Usage, r.Window)
			}
		}
	}
	if n != 10 {
		t.Errorf("%d as-sent records, want 10", n)
	}
}

// The as-sent policy replays captures only: on a Claude Code log it is
// refused before any cell runs, naming the session and its format.
func TestAsSentNeedsCapture(t *testing.T) {
	rn := setup(t)
	_, err := runner.Compare(context.Background(), rn, recorded(t), []runner.Policy{runner.AsSentPolicy()}, runner.Options{Workers: 1})
	var ie *runner.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "as-sent replays captured requests") || !strings.Contains(err.Error(), "claude-code") {
		t.Fatalf("err = %v, want an input error naming the log's format", err)
	}
	if got := ie.Name(func(in string) string { return "<" + in + ">" }); !strings.Contains(got, "(<log format> capture)") {
		t.Errorf("%q names the log format in the runner's words, not as a flag", got)
	}
	if _, err := runner.ResolvePolicies([]string{assent.Name}, []string{"compression.threshold=0.5"}); err == nil {
		t.Error("an override of as-sent was accepted")
	}
}

// whatif on a capture takes as-sent beside its variants: its row is the
// replay of the requests as sent, on the whatif account, and its recorded
// side the capture's bill.
func TestWhatifAsSentCapture(t *testing.T) {
	rn := setup(t)
	ss := loadCapture(t, codexCapture)
	pols, err := runner.WhatifPolicies([]string{assent.Name, "ttl-1h"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := runner.Whatif(context.Background(), rn, ss, pols, runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	runs := policyRuns(rp.Runs, assent.Name)
	if len(runs) != 1 {
		t.Fatalf("%d as-sent runs, want 1", len(runs))
	}
	r := runs[0]
	// The same replay, made directly on the same account.
	direct, err := assent.Replay(context.Background(), loadCaptureAs(t, codexCapture, "whatif"), assent.Options{Prices: rn.Prices, Seed: rn.Seed})
	if err != nil {
		t.Fatal(err)
	}
	sum := direct.Summarize(nil)
	if r.Requests != sum.Calls || math.Abs(r.CostUSD-sum.ReplayedUSD) > 1e-9 || math.Abs(r.Recorded.CostUSD-sum.RecordedUSD) > 1e-9 {
		t.Errorf("whatif as-sent: %d calls $%.6f (billed $%.6f); the replay: %d calls $%.6f (billed $%.6f)",
			r.Requests, r.CostUSD, r.Recorded.CostUSD, sum.Calls, sum.ReplayedUSD, sum.RecordedUSD)
	}
	if sum.Calls != 6 {
		t.Errorf("%d calls, want trace_codex.json's 6", sum.Calls)
	}
	b, _ := json.Marshal(results.NewWhatif(rp.Runs, rp.Policies))
	if !strings.Contains(string(b), `"`+assent.Name+`"`) {
		t.Errorf("the what-if report has no as-sent column: %s", b)
	}
}

func loadCaptureAs(t *testing.T, path, tenant string) []*traces.Session {
	ss := loadCapture(t, path)
	for _, s := range ss {
		s.Tenant = tenant
	}
	return ss
}

// check gates a harness on a committed capture: the as-sent replay of a
// capture whose harness dropped its cache_control markers (the same
// requests, no markers: nothing is written or read) fails against the
// baseline the marked capture made, on cost and hit rate, cell by cell;
// the marked capture passes against itself.
func TestCheckAsSentCapture(t *testing.T) {
	rn := setup(t)
	rn.Hindsight = false
	run := func(path string) results.Summary {
		rp, err := runner.Compare(context.Background(), rn, loadCapture(t, path), []runner.Policy{runner.AsSentPolicy()}, runner.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return results.Summary{Runs: rp.Runs}
	}
	base := run(compactCapture)
	if rep := results.Check(base, run(compactCapture), nil); rep.Failed() {
		t.Fatalf("the capture fails against itself: %v", rep.Failures())
	}
	unmarked := filepath.Join(t.TempDir(), filepath.Base(compactCapture))
	writeUnmarked(t, compactCapture, unmarked)
	cur := run(unmarked)
	for _, r := range cur.Runs {
		if r.Tokens.CacheRead != 0 || r.Tokens.Writes() != 0 {
			t.Errorf("%s: unmarked requests read %d, wrote %d", r.Trace, r.Tokens.CacheRead, r.Tokens.Writes())
		}
	}
	rep := results.Check(base, cur, nil)
	if !rep.Failed() {
		t.Fatal("dropping every marker passed the check")
	}
	fails := strings.Join(rep.Failures(), ", ")
	// Session 2 read 51.4% of its prompt from cache as sent.
	if !strings.Contains(fails, "trace_compact_claude-2 · as-sent cache_hit_rate") {
		t.Errorf("failures %s do not name session 2's hit rate", fails)
	}
}

// writeUnmarked copies the claude-tap capture at src to dst with every
// cache_control marker removed.
func writeUnmarked(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	removed := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["cache_control"]; ok {
				delete(v, "cache_control")
				removed++
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if removed == 0 {
		t.Fatal("no marker to remove")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func preset(t *testing.T, name string) runner.Policy {
	t.Helper()
	p, err := runner.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// whatif on Claude Code's compaction capture, the optimum solved: every
// cell runs (the tape once gave a session the floor sizes of another, and
// the optimum's bound came out above the schedule it bounds), and each
// session's optimum is at most what its baseline replay paid.
func TestWhatifCaptureHindsight(t *testing.T) {
	rn := setup(t)
	rn.Hindsight = true
	ss := loadCapture(t, compactCapture)
	pols, err := runner.WhatifPolicies([]string{"ttl-5m", assent.Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := runner.Whatif(context.Background(), rn, ss, pols, runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range policyRuns(rp.Runs, "recorded-observed") {
		if r.Hindsight == nil {
			t.Fatalf("%s: no optimum", r.Trace)
		}
		n++
		if r.Hindsight.CostUSD > r.CostUSD+1e-6 {
			t.Errorf("%s: optimum $%.6f above the replay's $%.6f", r.Trace, r.Hindsight.CostUSD, r.CostUSD)
		}
	}
	if n != 8 {
		t.Errorf("%d baseline runs, want the capture's 8 sessions", n)
	}
}

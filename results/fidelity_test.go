package results

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/results/resultstest"
)

// A session is compared with its bill over the calls the log billed: a
// call the log shows without usage adds to the replay's cost but has no
// recorded cost to compare with, so it is left out of both sides.
func TestFidelityBilledCalls(t *testing.T) {
	runs := []RunSummary{
		{Trace: "a", CostUSD: 1.50, Recorded: &RecordedSummary{CostUSD: 1.00}, Error: &ErrorSummary{ReplayCostUSD: 1.015, CostPct: 1.5}},
		{Trace: "b", CostUSD: 2.08, Recorded: &RecordedSummary{CostUSD: 2.00}},
		{Trace: "c", CostUSD: 0.50}, // no bill: not a fidelity sample
	}
	obs := []RunSummary{
		{Trace: "a", CostUSD: 1.40, Recorded: &RecordedSummary{CostUSD: 1.00}, Error: &ErrorSummary{ReplayCostUSD: 0.99, CostPct: -1},
			Fidelity: &Fidelity{Calls: 7, ObservedResends: 2, ObservedKept: 1}},
	}
	rep := NewFidelityReport(runs, obs)
	if len(rep.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2 (c has no bill)", len(rep.Sessions))
	}
	byTrace := map[string]FidelitySession{}
	for _, s := range rep.Sessions {
		byTrace[s.Trace] = s
	}
	if a := byTrace["a"]; !resultstest.Near(a.ReplayUSD, 1.015) || !resultstest.Near(a.ErrorPct, 1.5) || !resultstest.Near(a.ObservedUSD, 0.99) || !resultstest.Near(a.ObservedErrorPct, -1) {
		t.Errorf("a: %+v, want replay 1.015 (+1.5%%) and observed 0.99 (-1%%), the billed calls only", a)
	}
	if b := byTrace["b"]; !resultstest.Near(b.ReplayUSD, 2.08) || !resultstest.Near(b.ErrorPct, 4) || b.ObservedUSD != b.ReplayUSD {
		t.Errorf("b: %+v, want its whole cost 2.08 (+4%%), and no observed run: the default replay's", b)
	}
	if a := byTrace["a"]; a.ObservedEvents != 3 || rep.ObservedResends != 2 || rep.ObservedKept != 1 || rep.ObservedCalls != 7 {
		t.Errorf("observed events: session %d, report %d + %d of %d calls; want 3, 2 + 1 of 7", a.ObservedEvents, rep.ObservedResends, rep.ObservedKept, rep.ObservedCalls)
	}
	if r := rep.Recorded; !resultstest.Near(r.RecordedUSD, 3) || !resultstest.Near(r.ReplayUSD, 3.095) || !resultstest.Near(r.TotalErrorPct, 0.095/3*100) || !resultstest.Near(r.Within2Pct, 0.5) || !resultstest.Near(r.Within5Pct, 1) {
		t.Errorf("recorded stats %+v", r)
	}
}

// The report groups sessions by format, version range and model, each
// kind only when the sessions span more than one, names in numeric order.
func TestFidelityGroups(t *testing.T) {
	run := func(trace, harness, model string, replay float64) RunSummary {
		return RunSummary{Trace: trace, CostUSD: replay, Recorded: &RecordedSummary{CostUSD: 1},
			Fidelity: &Fidelity{Calls: 1, Format: "claude-code", Harness: harness, Model: model}}
	}
	runs := []RunSummary{
		run("a", "claude-code 10.0.1", "opus", 1.01),
		run("b", "claude-code 2.0.57", "opus", 1.10),
		run("c", "claude-code 2.0.31", "opus", 1.00),
		run("d", "", "opus", 0.90),
	}
	rep := NewFidelityReport(runs, nil)
	var got []string
	for _, g := range rep.Groups {
		got = append(got, fmt.Sprintf("%s=%s/%d/%.0f", g.By, g.Name, g.Sessions, 100*g.Recorded.Within2Pct))
	}
	want := []string{"version=claude-code 2.0.x/2/50", "version=claude-code 10.0.x/1/100", "version=unknown/1/0"}
	if !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q (one format and one model make no rows)", got, want)
	}
	for in, want := range map[string]string{"claude-code 1.0.89": "claude-code 1.0.x", "codex 0.144.0": "codex 0.144.x", "hermes": "hermes", "x 7": "x 7"} {
		if got := VersionRange(in); got != want {
			t.Errorf("VersionRange(%q) = %q, want %q", in, got, want)
		}
	}
}

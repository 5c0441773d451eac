package runner

import (
	"context"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/synth"
)

func testSetup(t *testing.T) (*Runner, []*traces.Session) {
	t.Helper()
	ss, err := synth.Generate(context.Background(), "coding-burst", 3, 1, synth.Options{})
	require.NoError(t, err)
	rn, err := New(nil, "anthropic", 1)
	require.NoError(t, err)
	rn.Tokens.Warm(ss)
	return rn, ss
}

func testCells(t *testing.T, rn *Runner, ss []*traces.Session) *Plan {
	t.Helper()
	var specs []Policy
	for _, n := range []string{"hermes-default", "no-compaction"} {
		sp, err := Preset(n)
		require.NoError(t, err)
		specs = append(specs, sp)
	}
	plan, err := rn.Plan(context.Background(), Tenants(ss), specs, PlanOptions{})
	require.NoError(t, err)
	require.Len(t, plan.Cells, 6, "3 tenants × 2 policies")
	return plan
}

func collect(t *testing.T, rn *Runner, plan *Plan, workers int) []results.RunSummary {
	t.Helper()
	var runs []results.RunSummary
	require.NoError(t, rn.Run(context.Background(), plan, RunOptions{Workers: workers}, func(c *Cell) {
		runs = append(runs, c.Result.Runs...)
	}))
	return runs
}

// Results come in cell order, identical for any number of workers.
func TestRunDeterministic(t *testing.T) {
	rn, ss := testSetup(t)
	one := collect(t, rn, testCells(t, rn, ss), 1)
	four := collect(t, rn, testCells(t, rn, ss), 4)
	require.Len(t, one, 6)
	if !reflect.DeepEqual(one, four) {
		t.Errorf("-j 1 and -j 4 differ")
	}
	for i, r := range one {
		wantPol := "hermes-default"
		if i >= 3 {
			wantPol = "no-compaction"
		}
		if r.Policy != wantPol || r.Trace != ss[i%3].ID {
			t.Errorf("run %d = %s/%s, want %s/%s", i, r.Trace, r.Policy, ss[i%3].ID, wantPol)
		}
	}
}

// A cancelled context stops the run: nothing is emitted, the error says so.
func TestRunCancelled(t *testing.T) {
	rn, ss := testSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	emitted := 0
	err := rn.Run(ctx, testCells(t, rn, ss), RunOptions{Workers: 2}, func(*Cell) { emitted++ })
	if !errors.Is(err, context.Canceled) || emitted != 0 {
		t.Errorf("err %v, emitted %d; want context.Canceled and 0", err, emitted)
	}

	// Cancelling from emit stops the cells after it.
	ctx, cancel = context.WithCancel(context.Background())
	emitted = 0
	err = rn.Run(ctx, testCells(t, rn, ss), RunOptions{Workers: 1}, func(*Cell) { emitted++; cancel() })
	if !errors.Is(err, context.Canceled) || emitted != 1 {
		t.Errorf("err %v, emitted %d; want context.Canceled and 1", err, emitted)
	}
}

// Done sees every cell in cell order, failed or not; a failed cell goes
// to Failed, not emit, and the others' results stand (*CellsFailed).
func TestRunFailedCells(t *testing.T) {
	rn, ss := testSetup(t)
	plan := testCells(t, rn, ss)
	// Run replays no cell that has a result: this one failed already.
	plan.Cells[1].Result, plan.Cells[1].Err = &Result{}, errors.New("floor larger than the window")
	var done, failed, emitted []*Cell
	o := RunOptions{Workers: 2, Done: func(c *Cell) { done = append(done, c) }, Failed: func(c *Cell) { failed = append(failed, c) }}
	err := rn.Run(context.Background(), plan, o, func(c *Cell) { emitted = append(emitted, c) })
	var cf *CellsFailed
	if !errors.As(err, &cf) || cf.N != 1 || cf.Of != 6 || Stopped(err) {
		t.Fatalf("err %v, want 1 of 6 cells failed, not a stop", err)
	}
	if len(done) != 6 || len(failed) != 1 || failed[0] != plan.Cells[1] || len(emitted) != 5 {
		t.Errorf("done %d, failed %d, emitted %d; want 6, 1 (cell 1), 5", len(done), len(failed), len(emitted))
	}
	for i := range done {
		if done[i] != plan.Cells[i] {
			t.Errorf("done[%d] is not cell %d: not in cell order", i, i)
		}
	}
}

type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	f.n--
	return len(p), nil
}

// A journal that cannot be written stops the sweep with its error; resumed
// cells are not replayed.
func TestSweepJournal(t *testing.T) {
	rn, ss := testSetup(t)
	disk := errors.New("disk full")
	j := NewJournal(&failAfter{n: 2, err: disk}, "cells.jsonl")
	err := rn.Run(context.Background(), testCells(t, rn, ss), RunOptions{Workers: 1, Journal: j}, func(*Cell) {})
	if !errors.Is(err, disk) || err.Error() != "write cells.jsonl: disk full" {
		t.Errorf("err = %v, want the journal's", err)
	}

	plan := testCells(t, rn, ss)
	done := map[string][]results.RunSummary{plan.Cells[0].JournalKey(): {{Trace: "kept", Policy: "hermes-default"}}}
	require.Equal(t, 1, Resume(plan.Cells, done))
	var first string
	require.NoError(t, rn.Run(context.Background(), plan, RunOptions{Workers: 2, Journal: NewJournal(io.Discard, "x")}, func(c *Cell) {
		if first == "" {
			first = c.Result.Runs[0].Trace
		}
	}))
	if first != "kept" {
		t.Errorf("resumed cell replayed: first run %q", first)
	}
}

// One account's Claude and GPT sessions replayed together ("auto"): each
// meets its own model's provider, so each costs what it costs alone.
func TestMixedProviderTenant(t *testing.T) {
	claude, err := synth.Generate(context.Background(), "coding-burst", 1, 1, synth.Options{})
	require.NoError(t, err)
	gpt, err := synth.Generate(context.Background(), "coding-burst", 1, 2, synth.Options{Model: "gpt-5.4"})
	require.NoError(t, err)
	rn, err := New(nil, "auto", 1)
	require.NoError(t, err)
	sp, err := Preset("no-compaction")
	require.NoError(t, err)
	cost := func(ss []*traces.Session) map[string]float64 {
		for _, s := range ss {
			s.Tenant = "one account"
		}
		rn.Tokens.Warm(ss)
		plan, err := rn.Plan(context.Background(), Tenants(ss), []Policy{sp}, PlanOptions{})
		require.NoError(t, err)
		out := map[string]float64{}
		for _, r := range collect(t, rn, plan, 1) {
			out[r.Trace] = r.CostUSD
		}
		return out
	}
	alone := cost(claude)
	for k, v := range cost(gpt) {
		alone[k] = v
	}
	together := cost(append(append([]*traces.Session(nil), claude...), gpt...))
	require.Len(t, together, 2)
	for id, c := range together {
		require.InDelta(t, alone[id], c, 1e-9, "session %s: together %v, alone %v", id, c, alone[id])
	}
}

// SkipOpenLoop drops the open-loop replay of recorded sessions: the call
// records lose the "open_loop" estimate and the fit-prefix mark, the run
// its fidelity summary, and nothing else changes (the recorded replay's
// costs and prompts).
func TestSkipOpenLoop(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../testdata/claude-code/tool_heavy.jsonl")
	require.NoError(t, err)
	specs, err := ResolvePolicies([]string{"recorded"}, nil)
	require.NoError(t, err)
	var recs [2][]sim.Record
	var runs [2][]results.RunSummary
	for i, skip := range []bool{false, true} {
		rn, err := New(nil, "auto", 1)
		require.NoError(t, err)
		rn.SkipOpenLoop = skip
		plan, err := rn.Plan(context.Background(), Tenants(ss), specs, PlanOptions{})
		require.NoError(t, err)
		require.NoError(t, rn.Run(context.Background(), plan, RunOptions{Workers: 1}, func(c *Cell) {
			recs[i] = append(recs[i], c.Result.Records...)
			runs[i] = append(runs[i], c.Result.Runs...)
		}))
	}
	require.Equal(t, len(recs[0]), len(recs[1]))
	opens, fits := 0, 0
	for j := range recs[0] {
		a, b := recs[0][j], recs[1][j]
		for _, e := range a.Estimates {
			if e.Name == sim.EstimateOpenLoop {
				opens++
			}
		}
		if _, ok := a.DetailValue(sim.DetailFitPrefix); ok {
			fits++
		}
		for _, e := range b.Estimates {
			require.NotEqual(t, sim.EstimateOpenLoop, e.Name, "record %d", j)
		}
		_, fit := b.DetailValue(sim.DetailFitPrefix)
		require.False(t, fit, "record %d", j)
		require.Equal(t, a.Prompt, b.Prompt, "record %d", j)
		require.Equal(t, a.CostUSD, b.CostUSD, "record %d", j)
	}
	require.Positive(t, opens, "the open-loop replay marks calls")
	require.Positive(t, fits)
	require.Len(t, runs[1], len(runs[0]))
	for j := range runs[0] {
		require.Equal(t, runs[0][j].CostUSD, runs[1][j].CostUSD)
		require.NotNil(t, runs[0][j].Fidelity)
		require.Positive(t, runs[0][j].Fidelity.OpenLoopCalls)
		require.Nil(t, runs[1][j].Fidelity, "the recorded run's fidelity is the open loop's")
	}
}

// Every policy but recorded sizes blocks with the recorded-observed
// calibrators, so a run without the recorded policy (whatif's) never runs
// the recorded replay, and the other cells' results are the same with it
// or without it.
func TestRecordedReplayOnDemand(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../testdata/claude-code/tool_heavy.jsonl")
	require.NoError(t, err)
	variants, err := WhatifPolicies([]string{"ttl-1h", "prune-on-resume"}, nil)
	require.NoError(t, err)
	observe := append([]Policy{RecordedObserved()}, variants...)
	both := append([]Policy{Recorded()}, observe...)
	var costs [2][]float64
	for i, specs := range [][]Policy{observe, both} {
		rn, err := New(nil, "auto", 1)
		require.NoError(t, err)
		tenants := Tenants(ss)
		plan, err := rn.Plan(context.Background(), tenants, specs, PlanOptions{})
		require.NoError(t, err)
		require.NoError(t, rn.Run(context.Background(), plan, RunOptions{Workers: 2}, func(c *Cell) {
			if c.sim.Name != sim.RecordedName {
				for _, r := range c.Result.Runs {
					costs[i] = append(costs[i], r.CostUSD)
				}
			}
		}))
		rt := rn.recordedTenant(tenants[0])
		require.Equal(t, i == 1, rt.done, "the recorded replay ran")
		require.True(t, rt.obsDone, "the recorded-observed replay ran")
	}
	require.Len(t, costs[0], 3)
	require.Equal(t, costs[0], costs[1])
}

// Cells whose replays send the same requests share one hindsight optimum:
// whatif's variants that change nothing a session sends solve nothing
// again, and get the same result as their own copy.
func TestHindsightSolvedOnce(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../testdata/claude-code")
	require.NoError(t, err)
	variants, err := WhatifPolicies(nil, nil)
	require.NoError(t, err)
	rn, err := New(nil, "auto", 1)
	require.NoError(t, err)
	rn.Hindsight, rn.SkipOpenLoop = true, true
	plan, err := rn.Plan(context.Background(), Tenants(ss), append([]Policy{RecordedObserved()}, variants...), PlanOptions{})
	require.NoError(t, err)
	var done []*Cell
	require.NoError(t, rn.Run(context.Background(), plan, RunOptions{Workers: 2}, func(c *Cell) {
		require.NotNil(t, c.Result.Hindsight, "cell %s", c.sim.Name)
		done = append(done, c)
	}))
	distinct, shared := 0, 0
	for i, c := range done {
		first := true
		for _, d := range done[:i] {
			if d.Tenant.Key == c.Tenant.Key && reflect.DeepEqual(d.Result.Tape, c.Result.Tape) {
				first = false
				shared++
				require.NotSame(t, d.Result.Hindsight, c.Result.Hindsight)
				require.Equal(t, d.Result.Hindsight.CostUSD, c.Result.Hindsight.CostUSD)
				require.Equal(t, d.Result.Hindsight.Schedule, c.Result.Hindsight.Schedule)
				break
			}
		}
		if first {
			distinct++
		}
	}
	t.Logf("%d cells, %d distinct tapes, %d shared", len(done), distinct, shared)
	require.Positive(t, shared, "no two cells sent the same requests: the test shows nothing")
	require.Equal(t, distinct, rn.optima.Solves())
}

// A hindsight search cut to bound its memory (hindsight.Result.Capped)
// warns on every run it prices; the run's figures are the schedule's as
// ever.
func TestRegretCappedWarns(t *testing.T) {
	s := &traces.Session{ID: "s"}
	tn := Tenant{Key: "s", Sessions: []*traces.Session{s}, Roots: []*traces.Session{s}}
	res := &Result{
		Runs:      []results.RunSummary{{Trace: "s", CostUSD: 1.25}},
		Tape:      []hindsight.Call{{Key: "s"}},
		Hindsight: &hindsight.Result{CostUSD: 0.5, BoundUSD: 0.4, PolicyUSD: 1, Cost: []float64{0.5}, PolicyCost: []float64{1}, Capped: 2},
	}
	res.regret(tn)
	r := res.Runs[0]
	if r.Hindsight == nil || math.Abs(r.Hindsight.CostUSD-0.75) > 1e-12 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "cut on 2 calls") {
		t.Errorf("hindsight %+v, warnings %q", r.Hindsight, r.Warnings)
	}
	res.Runs[0].Warnings = nil
	res.Hindsight.Capped = 0
	res.regret(tn)
	if len(res.Runs[0].Warnings) != 0 {
		t.Errorf("an uncut search warns: %q", res.Runs[0].Warnings)
	}
}

package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Options are what every run here shares besides its inputs.
type Options struct {
	// Workers replay cells in parallel; output is the same for any
	// number (at least 1).
	Workers int
	// Shard, when sharded, runs only the cells the shard owns; Stubs are
	// the sessions a shard read by header only (shard.Open), read in full
	// when owned.
	Shard shard.Spec
	Stubs *shard.Stubs
	// Records keeps every run's records (for records.jsonl, report.html).
	Records bool
	// Start, when set, is told how many cells will run; Done sees each
	// finished cell (a progress bar), Failed each that failed (c.Err);
	// End, once Start was told, hears that the cells are over, whatever
	// their outcome, before the call returns (the bar clears).
	Start        func(todo int)
	Done, Failed func(*experiment.Cell)
	End          func()
}

// begin tells Start that todo cells will run; end tells End they are over.
func (o Options) begin(todo int) (end func()) {
	if o.Start != nil {
		o.Start(todo)
	}
	if o.End == nil {
		return func() {}
	}
	return o.End
}

// A Replay is what a run collected: the runs in the command's order, the
// records when kept, each run's tenant and workload, the cells planned,
// and a shard's part (shard.WritePart).
type Replay struct {
	Policies []string
	Runs     []report.RunSummary
	Records  []sim.Record
	Labels   map[string]experiment.Label
	// Workloads name each session's workload (experiment.Workload) by
	// session id, for compare's table and report; nil elsewhere.
	Workloads map[string]string
	Cells     []*experiment.Cell
	Parts     []shard.Cell
	// PolicyWarnings are Run's policy file's ignored keys
	// (experiment.Spec.Warnings); the other commands' callers hold their
	// specs.
	PolicyWarnings []string
}

// Outputs is the replay's output set (experiment.Outputs) under title.
func (rp *Replay) Outputs(title string, st *experiment.Setup, warnings []traces.Warning) *experiment.Outputs {
	return &experiment.Outputs{Title: title, Seed: st.Seed, Runs: rp.Runs, Records: rp.Records, Labels: rp.Labels, Workloads: rp.Workloads,
		Price: experiment.FirstPrice(st.Prices, rp.Records), Warnings: warnings}
}

// Stopped reports whether err, from a run here, stopped it (ctx
// cancelled, a journal or part that could not be written) rather than
// counting failed cells (*experiment.CellsFailed), whose run's results
// stand.
func Stopped(err error) bool {
	var failed *experiment.CellsFailed
	return err != nil && !errors.As(err, &failed)
}

// run replays p's cells (shard.Plan.Run) and hands each that ran to emit;
// the shard's part goes to rp.Parts.
func run(ctx context.Context, st *experiment.Setup, p *shard.Plan, j *experiment.Journal, o Options, rp *Replay, emit func(*experiment.Cell)) error {
	todo := 0
	for _, c := range p.Cells {
		if c.Result == nil {
			todo++
		}
	}
	defer o.begin(todo)()
	rp.Cells = p.Cells
	err := p.Run(ctx, st, o.Workers, j, o.Records, func(c *experiment.Cell) {
		if o.Done != nil {
			o.Done(c)
		}
	}, func(c *experiment.Cell) {
		if o.Failed != nil {
			o.Failed(c)
		}
	}, emit)
	rp.Parts = append(rp.Parts, p.Parts...)
	return err
}

// collect is emit for the runs of one list: the cell's runs, and its
// records when kept.
func (rp *Replay) collect(records bool) func(*experiment.Cell) {
	return func(c *experiment.Cell) {
		rp.Runs = append(rp.Runs, c.Result.Runs...)
		if records {
			rp.Records = append(rp.Records, c.Result.Records...)
		}
	}
}

// Compare replays every tenant of sessions (experiment.Tenants) under
// every spec, as ctxsim compare does; a shard owns tenants. The runs are
// sorted by trace, then in specs' order; rp.Workloads names every
// session's workload. An error that is not Stopped
// (cells failed) comes with the others' results.
func Compare(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, specs []experiment.Spec, o Options) (*Replay, error) {
	plan, err := shard.NewPlan(ctx, st, o.Stubs, experiment.Tenants(sessions), specs, o.Shard, shard.TenantUnit)
	if err != nil {
		return nil, err
	}
	st.Memo.Warm(sessions)
	rp := &Replay{Policies: experiment.SpecNames(specs), Labels: experiment.Labels(plan.Cells)}
	err = run(ctx, st, plan, nil, o, rp, rp.collect(o.Records))
	if Stopped(err) {
		return nil, err // interrupted: no partial output
	}
	report.SortRuns(rp.Runs, rp.Policies)
	rp.Workloads = map[string]string{}
	for _, s := range sessions {
		rp.Workloads[s.ID] = experiment.Workload(s)
	}
	return rp, err
}

// ErrNoRecorded is Whatif's error for sessions none of which carries
// recorded usage: there is no bill to compare with.
var ErrNoRecorded = errors.New("the sessions carry no recorded usage: nothing to compare with (try ctxsim compare)")

// Whatif replays sessions as one account (it sets every session's Tenant
// to "whatif", so they share the provider cache) under the recorded-observed baseline and then specs
// (experiment.WhatifSpecs), as ctxsim whatif does: the baseline honours the
// log's observed re-sends, which happened whatever the policy, so every
// variant replays them too and savings compare like with like. A shard
// owns (policy, tenant) cells. rp.Runs are in cell order, rp.Policies the
// baseline first (report.NewWhatif reads them).
func Whatif(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, specs []experiment.Spec, o Options) (*Replay, error) {
	specs = append([]experiment.Spec{experiment.RecordedObserved()}, specs...)
	for _, s := range sessions {
		s.Tenant = "whatif"
	}
	st.Memo.Warm(sessions)
	tenants := experiment.Tenants(sessions)
	if len(tenants) == 0 || !tenants[0].HasRecorded() {
		return nil, ErrNoRecorded
	}
	plan, err := shard.NewPlan(ctx, st, nil, tenants, specs, o.Shard, shard.CellUnit)
	if err != nil {
		return nil, err
	}
	rp := &Replay{Policies: experiment.SpecNames(specs), Labels: experiment.Labels(plan.Cells)}
	err = run(ctx, st, plan, nil, o, rp, rp.collect(o.Records))
	if Stopped(err) {
		return nil, err
	}
	return rp, err
}

// ErrNoCells is Fidelity's error, unsharded, when no session carries
// recorded usage.
var ErrNoCells = errors.New("no session carries recorded usage")

// Fidelity replays every session with recorded usage, each (with its
// subagents) its own account (it clears every session's Tenant), under the recorded and the
// recorded-observed policies, as ctxsim fidelity does, and returns the
// fidelity report; a session that cannot be replayed is listed in
// Skipped. A shard owns sessions; its report covers them only (merge
// builds the whole one from the parts in rp).
func Fidelity(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, o Options) (report.FidelityReport, *Replay, error) {
	// A directory of logs from many people must not share one cache.
	for _, s := range sessions {
		s.Tenant = ""
	}
	specs := []experiment.Spec{experiment.Recorded(), experiment.RecordedObserved()}
	plan, err := shard.NewPlan(ctx, st, o.Stubs, experiment.Tenants(sessions), specs, o.Shard, shard.TenantUnit)
	if err != nil {
		return report.FidelityReport{}, nil, err
	}
	plan.Keep(func(c *experiment.Cell) bool { return c.Tenant.HasRecorded() })
	if len(plan.Cells) == 0 && !o.Shard.Sharded() {
		return report.FidelityReport{}, nil, ErrNoCells
	}
	st.Memo.Warm(sessions)
	rp := &Replay{Policies: experiment.SpecNames(specs)}
	var rec, obs []report.RunSummary
	err = run(ctx, st, plan, nil, o, rp, func(c *experiment.Cell) {
		if c.Spec.Name == experiment.RecordedObserved().Name {
			obs = append(obs, c.Result.Runs...)
		} else {
			rec = append(rec, c.Result.Runs...)
		}
	})
	if Stopped(err) {
		return report.FidelityReport{}, nil, err
	}
	rep := report.NewFidelityReport(rec, obs)
	for _, c := range plan.Cells {
		if c.Err != nil && c.Spec.Name == experiment.Recorded().Name {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", c.Tenant.Key, c.Err))
		}
	}
	return rep, rp, err
}

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
)

// Options are what every command here shares besides its inputs.
type Options struct {
	// Workers replay cells in parallel; output is the same for any
	// number (at least 1).
	Workers int
	// Shard, when sharded, runs only the cells the shard owns; Stubs are
	// the sessions it read by header only (Workload.Shard), read in full
	// when owned.
	Shard shard.Spec
	Stubs *traces.Stubs
	// Records keeps every run's records (for records.jsonl, report.html).
	Records bool
	// Start, when set, is told how many cells will run; Done sees each
	// finished cell (a progress bar), Failed each that failed (c.Err);
	// End, once Start was told, hears that the cells are over, whatever
	// their outcome, before the call returns (the bar clears).
	Start        func(todo int)
	Done, Failed func(*Cell)
	End          func()
	// MaxCells bounds a sweep's cells (0: DefaultMaxCells).
	MaxCells int
	// Progress, when set, hears the cells' work in sessions (RunOptions).
	Progress Progress
}

// A Replay is what a command collected: the runs in the command's order,
// the records when kept, each run's tenant and workload, the cells planned,
// and a shard's part (Plan.Entries, for shard.WriteDir).
type Replay struct {
	Policies []string
	Runs     []results.RunSummary
	Records  []sim.Record
	Labels   map[string]Label
	// Workloads name each session's workload (WorkloadOf) by session id,
	// for compare's table and report; nil elsewhere.
	Workloads map[string]string
	Cells     []*Cell
	Entries   []shard.Entry
	// PolicyWarnings are ReplayTrace's policy file's ignored keys
	// (Policy.Warnings); the other commands' callers hold their policies.
	PolicyWarnings []string
}

// Outputs is the replay's output set under title.
func (rp *Replay) Outputs(title string, rn *Runner, warnings []traces.Warning) *Outputs {
	return &Outputs{Title: title, Seed: rn.Seed, Runs: rp.Runs, Records: rp.Records, Labels: rp.Labels, Workloads: rp.Workloads,
		Price: FirstPrice(rn.Prices, rp.Records), Warnings: warnings}
}

// run runs p's cells (Runner.Run, journaled to j when set), telling o's
// hooks, and hands each cell that ran to emit; the shard's part goes to
// rp.Entries.
func (rn *Runner) run(ctx context.Context, p *Plan, j *Journal, o Options, rp *Replay, emit func(*Cell)) error {
	todo := 0
	for _, c := range p.Cells {
		if c.Result == nil {
			todo++
		}
	}
	if o.Start != nil {
		o.Start(todo)
	}
	if o.End != nil {
		defer o.End()
	}
	rp.Cells = p.Cells
	err := rn.Run(ctx, p, RunOptions{Workers: o.Workers, Journal: j, Records: o.Records, Done: o.Done, Failed: o.Failed, Progress: o.Progress}, emit)
	rp.Entries = append(rp.Entries, p.Entries...)
	return err
}

// collect is emit for the runs of one list: the cell's runs, and its
// records when kept.
func (rp *Replay) collect(records bool) func(*Cell) {
	return func(c *Cell) {
		rp.Runs = append(rp.Runs, c.Result.Runs...)
		if records {
			rp.Records = append(rp.Records, c.Result.Records...)
		}
	}
}

// Compare replays every tenant of sessions (Tenants) under every policy,
// as ctxsim compare does; a shard owns tenants. The runs are sorted by
// trace, then in policies' order; rp.Workloads names every session's
// workload. An error that is not Stopped (cells failed) comes with the
// others' results.
func Compare(ctx context.Context, rn *Runner, sessions []*traces.Session, pols []Policy, o Options) (*Replay, error) {
	plan, err := rn.Plan(ctx, Tenants(sessions), pols, PlanOptions{Shard: o.Shard, Stubs: o.Stubs})
	if err != nil {
		return nil, err
	}
	rn.Tokens.Warm(sessions)
	rp := &Replay{Policies: PolicyNames(pols), Labels: Labels(plan.Cells)}
	err = rn.run(ctx, plan, nil, o, rp, rp.collect(o.Records))
	if Stopped(err) {
		return nil, err // interrupted: no partial output
	}
	results.SortRuns(rp.Runs, rp.Policies)
	rp.Workloads = map[string]string{}
	for _, s := range sessions {
		rp.Workloads[s.ID] = WorkloadOf(s)
	}
	return rp, err
}

// SuitePerProfile is how many sessions of each synthetic profile the
// embedded suite holds when ctxsim compare and check run it with no
// arguments.
const SuitePerProfile = 2

// SuiteResults replays sessions, the embedded suite (Load of a Workload
// naming neither paths nor profiles, SuitePerProfile sessions of each),
// under every preset and the recorded policy (DefaultPolicies), as ctxsim
// compare does with no arguments: the results ctxsim check compares with
// its baseline (results.Check). Cells that failed come with the others'
// results and a *CellsFailed.
func SuiteResults(ctx context.Context, rn *Runner, sessions []*traces.Session, o Options) (results.Summary, error) {
	pols, err := DefaultPolicies(nil)
	if err != nil {
		return results.Summary{}, err
	}
	rp, err := Compare(ctx, rn, sessions, pols, o)
	if Stopped(err) {
		return results.Summary{}, err
	}
	return results.Summary{Runs: rp.Runs}, err
}

// ErrNoRecorded is Whatif's error for sessions none of which carries
// recorded usage: there is no bill to compare with.
var ErrNoRecorded = errors.New("the sessions carry no recorded usage: nothing to compare with (try ctxsim compare)")

// Whatif replays sessions as one account (it sets every session's Tenant
// to "whatif", so they share the provider cache) under the
// recorded-observed baseline and then pols (WhatifPolicies), as ctxsim
// whatif does: the baseline honours the log's observed re-sends, which
// happened whatever the policy, so every variant replays them too and
// savings compare like with like. A shard owns (policy, tenant) cells.
// rp.Runs are in cell order, rp.Policies the baseline first
// (results.NewWhatif reads them).
func Whatif(ctx context.Context, rn *Runner, sessions []*traces.Session, pols []Policy, o Options) (*Replay, error) {
	pols = append([]Policy{RecordedObserved()}, pols...)
	for _, s := range sessions {
		s.Tenant = "whatif"
	}
	// Every policy's regret is against the baseline's optimum
	// (results.NewWhatif): the other policies' tapes are not solved.
	base, prev := RecordedObserved().Name, rn.HindsightOf
	rn.HindsightOf = func(policy string) bool { return policy == base }
	defer func() { rn.HindsightOf = prev }()
	rn.Tokens.Warm(sessions)
	tenants := Tenants(sessions)
	if len(tenants) == 0 || !tenants[0].HasRecorded() {
		return nil, ErrNoRecorded
	}
	plan, err := rn.Plan(ctx, tenants, pols, PlanOptions{Shard: o.Shard, Unit: ByCell})
	if err != nil {
		return nil, err
	}
	rp := &Replay{Policies: PolicyNames(pols), Labels: Labels(plan.Cells)}
	err = rn.run(ctx, plan, nil, o, rp, rp.collect(o.Records))
	if Stopped(err) {
		return nil, err
	}
	return rp, err
}

// ErrNoCells is Fidelity's error, unsharded, when no session carries
// recorded usage.
var ErrNoCells = errors.New("no session carries recorded usage")

// Fidelity replays every session with recorded usage, each (with its
// subagents) its own account unless the logs' layout shows sessions of
// one (a config directory, or one project's folder: traces.GroupProjects;
// it sets every session's Tenant to its Account), under the
// recorded and the recorded-observed policies, as ctxsim fidelity does,
// and returns the fidelity report; a session that cannot be replayed is
// listed in Skipped. A shard owns sessions; its report covers them only
// (merge builds the whole one from the parts in rp).
func Fidelity(ctx context.Context, rn *Runner, sessions []*traces.Session, o Options) (results.FidelityReport, *Replay, error) {
	// Captures are replayed as sent too, each file one account (as the
	// capture importer sets Tenant), before the tenants are cleared; a
	// shard replays the files it owns and keeps their calls in its part.
	parts, err := asSentParts(ctx, rn, sessions, o.Shard)
	if err != nil {
		return results.FidelityReport{}, nil, err
	}
	// A directory of logs from many people must not share one cache; the
	// sessions of one account, as the logs' layout shows it, do (issue 22:
	// a floor one session keeps warm, another reads after its own gap).
	for _, s := range sessions {
		s.Tenant = s.Account
	}
	pols := []Policy{Recorded(), RecordedObserved()}
	plan, err := rn.Plan(ctx, Tenants(sessions), pols, PlanOptions{Shard: o.Shard, Stubs: o.Stubs})
	if err != nil {
		return results.FidelityReport{}, nil, err
	}
	plan.Keep(func(c *Cell) bool { return c.Tenant.HasRecorded() })
	if len(plan.Cells) == 0 && !o.Shard.Sharded() {
		return results.FidelityReport{}, nil, ErrNoCells
	}
	rn.Tokens.Warm(sessions)
	rp := &Replay{Policies: PolicyNames(pols)}
	var rec, obs []results.RunSummary
	err = rn.run(ctx, plan, nil, o, rp, func(c *Cell) {
		if c.Policy.Name == RecordedObserved().Name {
			obs = append(obs, c.Result.Runs...)
		} else {
			rec = append(rec, c.Result.Runs...)
		}
	})
	if Stopped(err) {
		return results.FidelityReport{}, nil, err
	}
	rep := results.NewFidelityReport(rec, obs)
	var calls []assent.Call
	for _, pt := range parts {
		calls = append(calls, pt.calls...)
		if o.Shard.Sharded() {
			b, err := json.Marshal(pt.calls)
			if err != nil {
				return results.FidelityReport{}, nil, err
			}
			rp.Entries = append(rp.Entries, shard.Entry{Order: []int{len(pols), pt.order}, Unit: pt.unit, Data: b})
		}
	}
	rep.AsSent = AsSentGroups(calls)
	for _, c := range plan.Cells {
		if c.Err != nil && c.Policy.Name == Recorded().Name {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", c.Tenant.Key, c.Err))
		}
	}
	return rep, rp, err
}

// AsSent replays the captured sessions among sessions (format capture)
// as they were sent (package sim/assent), and groups the calls by API
// (AsSentGroups); nil when there are none.
func AsSent(ctx context.Context, rn *Runner, sessions []*traces.Session) ([]results.AsSentGroup, error) {
	parts, err := asSentParts(ctx, rn, sessions, shard.Spec{})
	if err != nil {
		return nil, err
	}
	var calls []assent.Call
	for _, pt := range parts {
		calls = append(calls, pt.calls...)
	}
	return AsSentGroups(calls), nil
}

// An asSentPart is the as-sent replay of one account's captures: a shard
// of fidelity owns it by unit, and keeps its calls in its part for merge.
type asSentPart struct {
	order int // the account's place among the run's
	unit  string
	calls []assent.Call
}

// asSentParts replays, account by account in load order (the capture
// file: Session.TenantID), the captured sessions among sessions that sp
// owns; each account's replay is its own, so the parts of every shard
// are the parts of the unsharded run.
func asSentParts(ctx context.Context, rn *Runner, sessions []*traces.Session, sp shard.Spec) ([]asSentPart, error) {
	by := map[string][]*traces.Session{}
	var keys []string
	for _, s := range sessions {
		if s.Format != capture.FormatName {
			continue
		}
		k := s.TenantID()
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], s)
	}
	var out []asSentPart
	for i, k := range keys {
		unit := assent.Name + "\x00" + k
		if !sp.Owns(unit) {
			continue
		}
		r, err := assent.Replay(ctx, by[k], assent.Options{Prices: rn.Prices, Seed: rn.Seed})
		if err != nil {
			return nil, err
		}
		out = append(out, asSentPart{order: i, unit: unit, calls: r.Calls})
	}
	return out, nil
}

// AsSentGroups totals as-sent calls by API (nil when there are none),
// naming each call the replay did not bill exactly.
func AsSentGroups(calls []assent.Call) []results.AsSentGroup {
	if len(calls) == 0 {
		return nil
	}
	r := &assent.Report{Calls: calls}
	var out []results.AsSentGroup
	for _, api := range []string{capture.Anthropic, capture.OpenAIResponses, capture.OpenAIChat} {
		sum := r.Summarize(func(c *assent.Call) bool { return c.API == api })
		if sum.Calls == 0 {
			continue
		}
		g := results.AsSentGroup{API: api, Calls: sum.Calls, Exact: sum.Exact, ReadExact: sum.ReadExact, Outside: sum.Outside,
			Cut: sum.Cut, CutExact: sum.CutExact, RecordedUSD: sum.RecordedUSD, ReplayUSD: sum.ReplayedUSD, ErrorPct: sum.ErrorPct, ReadMatchPct: sum.ReadMatchPct}
		for i := range r.Calls {
			if c := &r.Calls[i]; c.API == api && !c.Exact() {
				g.NotExact = append(g.NotExact, c.String())
			}
		}
		out = append(out, g)
	}
	return out
}

// ErrNoSessions is ReplayTrace's error for no sessions at all.
var ErrNoSessions = errors.New("no sessions to replay")

// ReplayTrace replays sessions as one tenant (it sets every session's
// Tenant to "run") under one policy, as ctxsim run does: name with sets
// applied (ResolvePolicies), or when name is "" the recorded policy if the
// sessions carry recorded usage, else hermes-default. It keeps the
// records, and returns the cell's result with the replay (its hindsight
// tape, when Runner.Hindsight found one). A policy that needs recorded
// usage the sessions lack is an *InputError. Any error, the cell's
// included, comes with no results: there is only the one cell.
func ReplayTrace(ctx context.Context, rn *Runner, sessions []*traces.Session, name string, sets []string, o Options) (*Replay, *Result, error) {
	if len(sessions) == 0 {
		return nil, nil, ErrNoSessions
	}
	for _, s := range sessions {
		s.Tenant = "run"
	}
	g := Tenants(sessions)[0]
	if name == "" {
		name = "hermes-default"
		if g.HasRecorded() {
			name = sim.RecordedName
		}
	}
	pols, err := ResolvePolicies([]string{name}, sets)
	if err != nil {
		return nil, nil, err
	}
	rn.Tokens.Warm(sessions)
	plan, err := rn.Plan(ctx, []Tenant{g}, pols, PlanOptions{})
	if err != nil {
		return nil, nil, err
	}
	if len(plan.Cells) == 0 {
		return nil, nil, badInput("policy %s needs a trace with recorded usage", pols[0].Name)
	}
	rp := &Replay{Policies: PolicyNames(pols), Labels: Labels(plan.Cells), PolicyWarnings: pols[0].Warnings}
	var res *Result
	o.Workers, o.Records = 1, true
	err = rn.run(ctx, plan, nil, o, rp, func(c *Cell) {
		rp.Runs, rp.Records, res = c.Result.Runs, c.Result.Records, c.Result
	})
	if err != nil {
		return nil, nil, err
	}
	return rp, res, nil
}

// SweepJournal opens a sweep's journal once the cells are planned
// (OpenJournal): the journal and the cells it already holds.
type SweepJournal func() (j *Journal, done map[string][]results.RunSummary, close func() error, err error)

// A SweepDir is a directory a sweep journals each finished cell to
// (OpenJournal: cells.jsonl beside sweep.json), a new one, or with Resume
// one to continue.
type SweepDir struct {
	Dir    string
	Resume bool
	// Flags (name=value) and PricesFile (the price file, read when the
	// journal opens; "" for the embedded rate card) identify the sweep
	// beside its cells and sessions (NewIdentity): a resume with others
	// is refused.
	Flags      []string
	PricesFile string
	// Wrap is OpenJournal's seam around the journal's file.
	Wrap func(io.Writer) io.Writer
	// Log, when set, hears what a user of the directory should know: a
	// last line cut short by an interrupted write (its cell runs again),
	// and how far a resumed sweep had got (Resumed).
	Log io.Writer
}

// Resumed is Sweep's resumed for d: a resumed sweep says on d.Log how
// many of its cells were done.
func (d SweepDir) Resumed(done, of int) {
	if d.Resume && d.Log != nil {
		fmt.Fprintf(d.Log, "ctxsim sweep: resuming %s: %d of %d cells done, %d to run\n", d.Dir, done, of, of-done)
	}
}

// dropped is OpenJournal's dropped for d: a line on d.Log.
func (d SweepDir) dropped(path string, line int) {
	if d.Log != nil {
		fmt.Fprintf(d.Log, "ctxsim sweep: %s:%d: dropped the last line, cut short by an interrupted write; its cell runs again\n", safetext.Line(path), line)
	}
}

// Journal is the SweepJournal of a sweep of g over sessions in d.
func (d SweepDir) Journal(g *Grid, sessions []*traces.Session) SweepJournal {
	return func() (*Journal, map[string][]results.RunSummary, func() error, error) {
		var prices []byte
		if d.PricesFile != "" {
			b, err := os.ReadFile(d.PricesFile)
			if err != nil {
				return nil, nil, nil, &InputError{Msg: fmt.Sprintf("{price file}: %v", err)}
			}
			prices = b
		}
		id, err := NewIdentity(g.Points, d.Flags, prices, sessions)
		if err != nil {
			return nil, nil, nil, err
		}
		meta := SweepMeta{Format: JournalFormat, Identity: id, Base: g.Base.Name, Grid: MetaGrid(g.Axes)}
		return OpenJournal(d.Dir, d.Resume, meta, d.Wrap, d.dropped)
	}
}

// Sweep replays every tenant of sessions under every grid point, as ctxsim
// sweep does; a shard owns (grid point, tenant) cells and reads in full
// only the tenants of its cells. With journal set, each finished cell is
// journaled and, when resume is set, the cells the journal holds are not
// run again (resumed hears how many of how many). rp.Runs are in cell
// order (results.SweepGrid.Sort orders them for output).
func Sweep(ctx context.Context, rn *Runner, sessions []*traces.Session, points []Policy, o Options,
	journal SweepJournal, resumed func(done, of int)) (*Replay, error) {
	if err := CheckCells([]results.Axis{{Values: make([]string, len(points))}}, len(Tenants(sessions)), o.MaxCells); err != nil {
		return nil, err
	}
	plan, err := rn.Plan(ctx, Tenants(sessions), points, PlanOptions{Shard: o.Shard, Unit: ByCell, Stubs: o.Stubs})
	if err != nil {
		return nil, err
	}
	var jr *Journal
	if journal != nil {
		var done map[string][]results.RunSummary
		var closeJournal func() error
		if jr, done, closeJournal, err = journal(); err != nil {
			return nil, err
		}
		defer closeJournal()
		rn.Tokens.Warm(sessions)
		if resumed != nil {
			resumed(Resume(plan.Cells, done), len(plan.Cells))
		}
	} else {
		rn.Tokens.Warm(sessions)
	}
	rp := &Replay{Policies: PolicyNames(points), Labels: Labels(plan.Cells)}
	o.Records = false // a sweep writes no records
	err = rn.run(ctx, plan, jr, o, rp, rp.collect(false))
	if Stopped(err) {
		// Interrupted, or the journal cannot be written: no results, as a
		// crash would leave, so the journal stays the one record.
		return nil, err
	}
	return rp, err
}

// WriteSweep orders runs for g (results.SweepGrid.Sort) and writes a
// sweep's summary.json and runs.parquet to dir, when set, and its cost
// and hit-rate heatmaps to plots, when set: what ctxsim sweep and merge
// write, the same bytes either way.
func WriteSweep(dir, plots string, g results.SweepGrid, runs []results.RunSummary, labels map[string]Label, warnings []traces.Warning) error {
	g.Sort(runs)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := report.WriteSummaryFile(filepath.Join(dir, "summary.json"), results.Summary{Runs: runs, Warnings: warnings}); err != nil {
			return err
		}
		if err := WriteRunsParquet(dir, runs, labels); err != nil {
			return err
		}
	}
	if plots == "" {
		return nil
	}
	figs, err := report.GridMatrix(g, runs).Heatmaps()
	if err != nil {
		return err
	}
	return report.WriteFigures(plots, figs)
}

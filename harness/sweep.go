package harness

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
)

// SweepJournal opens a sweep's journal once the cells are planned
// (experiment.OpenJournal): the journal and the cells it already holds.
type SweepJournal func() (j *experiment.Journal, done map[string][]report.RunSummary, close func() error, err error)

// A SweepDir is a directory a sweep journals each finished cell to
// (experiment.OpenJournal: cells.jsonl beside sweep.json), a new one, or
// with Resume one to continue.
type SweepDir struct {
	Dir    string
	Resume bool
	// Flags (name=value) and Prices (the --prices file's content, nil for
	// the embedded rate card) identify the sweep beside its cells and
	// sessions (experiment.NewIdentity): a resume with others is refused.
	Flags  []string
	Prices []byte
	// Wrap and Dropped are OpenJournal's: a seam around the journal's file,
	// and what hears of a last line cut short by an interrupted write.
	Wrap    func(io.Writer) io.Writer
	Dropped func(path string, line int)
}

// Journal is the SweepJournal of a sweep of g over sessions in d.
func (d SweepDir) Journal(g *experiment.Grid, sessions []*traces.Session) SweepJournal {
	return func() (*experiment.Journal, map[string][]report.RunSummary, func() error, error) {
		id, err := experiment.NewIdentity(g.Points, d.Flags, d.Prices, sessions)
		if err != nil {
			return nil, nil, nil, err
		}
		meta := experiment.SweepMeta{Format: experiment.JournalFormat, Identity: id, Base: g.Base.Name, Grid: experiment.MetaGrid(g.Axes)}
		return experiment.OpenJournal(d.Dir, d.Resume, meta, d.Wrap, d.Dropped)
	}
}

// Sweep replays every tenant of sessions under every grid point, as ctxsim
// sweep does; a shard owns (grid point, tenant) cells and reads in full
// only the tenants of its cells. With journal set, each finished cell is
// journaled and, when resume is set, the cells the journal holds are not
// run again (resumed hears how many of how many). rp.Runs are in cell
// order (report.SweepGrid.Sort orders them for output).
func Sweep(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, points []experiment.Spec, o Options,
	journal SweepJournal, resumed func(done, of int)) (*Replay, error) {
	plan, err := shard.NewPlan(ctx, st, o.Stubs, experiment.Tenants(sessions), points, o.Shard, shard.CellUnit)
	if err != nil {
		return nil, err
	}
	var jr *experiment.Journal
	if journal != nil {
		var done map[string][]report.RunSummary
		var closeJournal func() error
		if jr, done, closeJournal, err = journal(); err != nil {
			return nil, err
		}
		defer closeJournal()
		st.Memo.Warm(sessions)
		if resumed != nil {
			resumed(experiment.Resume(plan.Cells, done), len(plan.Cells))
		}
	} else {
		st.Memo.Warm(sessions)
	}
	rp := &Replay{Policies: experiment.SpecNames(points), Labels: experiment.Labels(plan.Cells)}
	o.Records = false // a sweep writes no records
	err = run(ctx, st, plan, jr, o, rp, rp.collect(false))
	if Stopped(err) {
		// Interrupted, or the journal cannot be written: no results, as a
		// crash would leave, so the journal stays the one record.
		return nil, err
	}
	return rp, err
}

// WriteSweep orders runs for g (report.SweepGrid.Sort) and writes a
// sweep's summary.json and runs.parquet to dir, when set, and its cost
// and hit-rate heatmaps to plots, when set: what ctxsim sweep and merge
// write, the same bytes either way.
func WriteSweep(dir, plots string, g report.SweepGrid, runs []report.RunSummary, labels map[string]experiment.Label, warnings []traces.Warning) error {
	g.Sort(runs)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := report.WriteFileAtomic(filepath.Join(dir, "summary.json"), func(w io.Writer) error {
			return report.WriteResults(w, report.Results{Runs: runs, Warnings: warnings})
		}); err != nil {
			return err
		}
		if err := experiment.WriteRunsParquet(dir, runs, labels); err != nil {
			return err
		}
	}
	if plots == "" {
		return nil
	}
	figs, err := g.Matrix(runs).Heatmaps()
	if err != nil {
		return err
	}
	return report.WriteFigures(plots, figs)
}

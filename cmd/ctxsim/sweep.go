package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "sweep",
		summary: "replay traces under a grid of settings of one policy; resumable",
		usage:   "--policy P --grid KEY=V1,V2,... [--grid ...] [PATH...] [--profile P]... [flags]",
		help: `Sweep replays every trace under the cross product of the --grid values
applied to one base policy (a preset or a .yaml/.json config), and prints
the compare table of every grid cell. Each cell is named after the base
policy and its grid values, in --grid order, with each key shortened to its
last element: hermes-micro[micro_compact_every_n_turns=5,cache_ttl=1h].
--set overrides apply to the base before the grid.

With exactly two --grid keys the text and Markdown output end with a
matrix of total cost (summed over the traces), rows the first key's
values and columns the second's, and --plots writes heatmaps of that cost
and of the token-weighted cache hit rate.

The workload is chosen as for compare; with no --trace and no --profile it
is the embedded suite. Output is byte-identical for any -j.

With --out DIR, every finished cell is appended to DIR/cells.jsonl as soon
as it finishes (one JSON line per trace of the cell, synced to disk), and
DIR/summary.json is written at the end, runs in grid order then by trace.
DIR/sweep.json identifies the sweep by every input that changes a result:
the cells' settings, the simulation flags (--seed, --provider, the fault
rates...), the --prices file and the sessions themselves, hashed. "--resume" continues an interrupted sweep in DIR: it
keeps the cells already in cells.jsonl (a last line cut short by the
interruption is dropped with a warning), runs the rest, and prints and
writes exactly what an uninterrupted run would. It refuses a DIR whose
sweep.json differs from the command line's. Without --resume, sweep
refuses a DIR that already holds cells. Sweep does not write
records.jsonl or report.html: use compare on the cells you care about.

Examples:
  ctxsim sweep --policy hermes-micro --profile coding-burst \
      --grid compression.micro_compact_every_n_turns=1,2,5,10 \
      --grid prompt_caching.cache_ttl=5m,1h
  ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 \
      --trace ~/.claude/projects --out sweeps/threshold
  ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 \
      --trace ~/.claude/projects --out sweeps/threshold --resume
  ctxsim sweep --policy my-policy.yaml --grid prompt_caching.cache_ttl=5m,1h,auto \
      --grid prompt_caching.layout=hermes,system_and_3 --plots figs/ --json`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			sw := sweepFlags{fs: fs}
			sw.wf.add(fs)
			sw.sf.add(fs, "")
			fs.Lookup("policy").Usage = "the base policy: a preset (see ctxsim policies) or a .yaml/.json config; required"
			fs.StringArrayVar(&sw.grid, "grid", nil, "a setting and the values to sweep, key=v1,v2,...; repeatable (the cross product runs)")
			sw.of.add(fs)
			fs.Lookup("out").Usage = "directory to write cells.jsonl (as cells finish), sweep.json and summary.json to"
			fs.BoolVar(&sw.resume, "resume", false, "continue the interrupted sweep in --out, skipping finished cells")
			fs.StringVar(&sw.plots, "plots", "", "directory to write cost and hit-rate heatmaps to (exactly two --grid keys)")
			return func(e *env, args []string) error {
				sw.wf.traces = append(sw.wf.traces, args...) // PATH... and --trace PATH are one list
				return runSweep(e, &sw)
			}
		},
	})
}

type sweepFlags struct {
	fs     *pflag.FlagSet
	wf     workloadFlags
	sf     simFlags
	of     outFlags
	grid   []string
	resume bool
	plots  string
}

// parseGrid reads the --grid flags against base; a key also fixed by --set
// is refused (the grid would silently override it).
func parseGrid(flags, sets []string, base policies.Config) ([]report.Axis, error) {
	if len(flags) == 0 {
		return nil, usagef("--grid: want at least one key=v1,v2,...")
	}
	fixed := map[string]bool{}
	for _, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		fixed[k] = true
	}
	for _, g := range flags {
		if k, _, _ := strings.Cut(g, "="); fixed[strings.TrimSpace(k)] {
			return nil, usagef("--grid %s: key is also fixed by --set", strings.TrimSpace(k))
		}
	}
	axes, err := experiment.ParseGrid(flags, base)
	if err != nil {
		return nil, usagef("--%v", err)
	}
	return axes, nil
}

func runSweep(e *env, sw *sweepFlags) error {
	format, err := sw.of.parse()
	if err != nil {
		return err
	}
	switch {
	case len(sw.sf.policies) == 0:
		return usagef("--policy: sweep needs the base policy (a preset or a .yaml/.json config)")
	case len(sw.sf.policies) > 1:
		return usagef("--policy: sweep takes one base policy, got %d", len(sw.sf.policies))
	case sw.sf.policies[0] == sim.RecordedName:
		return usagef("--policy %s: the recorded policy has no settings to sweep", sim.RecordedName)
	case sw.resume && sw.of.out == "":
		return usagef("--resume needs --out DIR, the sweep to continue")
	}
	specs, err := resolvePolicies(sw.sf.policies, sw.sf.sets)
	if err != nil {
		return err
	}
	base := *specs[0].Config
	axes, err := parseGrid(sw.grid, sw.sf.sets, base)
	if err != nil {
		return err
	}
	if sw.plots != "" && len(axes) != 2 {
		return usagef("--plots: the heatmaps need exactly two --grid keys, got %d", len(axes))
	}
	points, err := experiment.GridPoints(base, axes)
	if err != nil {
		return usagef("--%v", err)
	}
	st, err := sw.sf.setup(e)
	if err != nil {
		return err
	}
	sessions, err := sw.wf.load(e, sw.sf.seed)
	if err != nil {
		return err
	}
	for _, w := range clampWarnings(sw.sf.sets, axes, sessions, st.Prices) {
		fmt.Fprintln(e.stderr, "warning: "+w)
	}
	var jr *experiment.Journal
	done := map[string][]report.RunSummary{}
	if sw.of.out != "" {
		id, err := sweepIdentity(sw.fs, sw.sf.prices, points, sessions)
		if err != nil {
			return err
		}
		var closeJournal func() error
		jr, done, closeJournal, err = openJournal(e, sw.of.out, sw.resume, experiment.SweepMeta{Format: experiment.JournalFormat, Identity: id, Base: base.Name, Grid: experiment.MetaGrid(axes)})
		if err != nil {
			return err
		}
		defer closeJournal()
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells(experiment.Tenants(sessions), points)
	if err != nil {
		return err
	}
	if sw.resume {
		n := experiment.Resume(cells, done)
		fmt.Fprintf(e.stderr, "ctxsim sweep: resuming %s: %d of %d cells done, %d to run\n", sw.of.out, n, len(cells), len(cells)-n)
	}
	var runs []report.RunSummary
	cellErr := runCells(e, st, cells, sw.sf.jobs, jr, func(c *experiment.Cell) {
		runs = append(runs, c.Result.Runs...)
	})
	var failed *cellsFailed
	if cellErr != nil && !errors.As(cellErr, &failed) {
		// Interrupted, or the journal cannot be written: stop without a
		// summary, as a crash would, so the journal stays the one record.
		return cellErr
	}

	// Runs in cell order (grid order, then tenant order), then by trace.
	rank := map[string]int{}
	for i, p := range points {
		rank[p.Name] = i
	}
	sortStable(runs, func(a, b report.RunSummary) bool {
		if rank[a.Policy] != rank[b.Policy] {
			return rank[a.Policy] < rank[b.Policy]
		}
		return a.Trace < b.Trace
	})
	if jr != nil {
		if err := report.WriteFileAtomic(filepath.Join(sw.of.out, "summary.json"), func(w io.Writer) error {
			return report.WriteResults(w, report.Results{Runs: runs, Warnings: e.warn.List()})
		}); err != nil {
			return err
		}
	}
	var m *report.Matrix
	if len(axes) == 2 {
		m = sweepMatrix(axes, points, runs)
	}
	if sw.plots != "" {
		figs, err := m.Heatmaps()
		if err != nil {
			return err
		}
		if err := report.WriteFigures(sw.plots, figs); err != nil {
			return err
		}
	}
	if format == report.JSON {
		if err := report.WriteResults(e.stdout, report.Results{Runs: runs}); err != nil {
			return err
		}
		return cellErr
	}
	// The table groups rows by trace, as compare's does, so the cheapest
	// cell of each trace stands out.
	byTrace := append([]report.RunSummary(nil), runs...)
	sortRuns(byTrace, points)
	title := fmt.Sprintf("Sweep of %s over %s (%d cells)", base.Name, axisNames(axes), len(points))
	if err := report.WriteRuns(e.stdout, format, byTrace, report.RunsOptions{Title: title, Warnings: e.warn.List()}); err != nil {
		return err
	}
	if m != nil && (format == report.Text || format == report.Markdown) {
		fmt.Fprintln(e.stdout)
		if err := m.Table().Write(e.stdout, format); err != nil {
			return err
		}
	}
	return cellErr
}

func axisNames(axes []report.Axis) string {
	names := make([]string, len(axes))
	for i, ax := range axes {
		names[i] = ax.Key
	}
	return strings.Join(names, " × ")
}

// notIdentity are the flags left out of the sweep's identity: output and
// parallelism, and the grid, policy, workload and prices flags, which are
// hashed by their effect (the cells' settings, the sessions, the file). A
// flag added later is in the identity by default, which is the safe side.
var notIdentity = map[string]bool{
	"jobs": true, "json": true, "format": true, "out": true, "resume": true, "plots": true, "help": true,
	"grid": true, "policy": true, "policies": true, "set": true, "wide": true,
	"trace": true, "profile": true, "sessions": true, "from": true, "prices": true,
}

func sweepIdentity(fs *pflag.FlagSet, prices string, points []experiment.Spec, sessions []*traces.Session) (experiment.Identity, error) {
	var flags []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !notIdentity[f.Name] {
			flags = append(flags, f.Name+"="+f.Value.String())
		}
	})
	var b []byte
	if prices != "" {
		var err error
		if b, err = os.ReadFile(prices); err != nil {
			return experiment.Identity{}, fmt.Errorf("--prices: %w", err)
		}
	}
	return experiment.NewIdentity(points, flags, b, sessions)
}

// openJournal prepares dir for a sweep with meta. A fresh sweep writes
// sweep.json and an empty cells.jsonl; a resumed one checks sweep.json,
// reads the finished cells and rewrites cells.jsonl without any torn or
// incomplete tail, so appends start on a line boundary.
func openJournal(e *env, dir string, resume bool, meta experiment.SweepMeta) (*experiment.Journal, map[string][]report.RunSummary, func() error, error) {
	metaPath := filepath.Join(dir, "sweep.json")
	path := filepath.Join(dir, "cells.jsonl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	done := map[string][]report.RunSummary{}
	_, statErr := os.Stat(path)
	have := statErr == nil
	old, err := os.ReadFile(metaPath)
	switch {
	case err == nil && resume:
		var was experiment.SweepMeta
		if err := json.Unmarshal(old, &was); err != nil || was.Format != experiment.JournalFormat {
			return nil, nil, nil, fmt.Errorf("%s: not a %s file", metaPath, experiment.JournalFormat)
		}
		if d := was.Identity.Diff(meta.Identity); d != "" {
			return nil, nil, nil, fmt.Errorf("--resume: the sweep in %s is another one: %s; rerun it with the same flags, or sweep into a new --out", dir, d)
		}
		if have {
			lines, err := readJournal(e, path)
			if err != nil {
				return nil, nil, nil, err
			}
			done = experiment.CompleteCells(lines)
			if err := report.WriteFileAtomic(path, func(w io.Writer) error {
				return experiment.WriteComplete(w, lines, done)
			}); err != nil {
				return nil, nil, nil, err
			}
		}
	case err == nil || have:
		if resume {
			return nil, nil, nil, fmt.Errorf("--resume: %s has cells.jsonl but no sweep.json; cannot tell which sweep it holds", dir)
		}
		return nil, nil, nil, fmt.Errorf("--out %s already holds a sweep: add --resume to continue it, or remove it", dir)
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, nil, err
	default:
		if err := report.WriteFileAtomic(metaPath, func(w io.Writer) error {
			return writeJSON(w, meta)
		}); err != nil {
			return nil, nil, nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, nil, err
	}
	var w io.Writer = f
	if e.journal != nil {
		w = e.journal(f)
	}
	return experiment.NewJournal(w, path), done, f.Close, nil
}

// readJournal reads cells.jsonl, warning on stderr about a last line cut
// short by an interrupted write (its cell runs again).
func readJournal(e *env, path string) ([]experiment.JournalLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return experiment.ReadJournal(f, path, func(line int) {
		fmt.Fprintf(e.stderr, "ctxsim sweep: %s:%d: dropped the last line, cut short by an interrupted write; its cell runs again\n", path, line)
	})
}

// sweepMatrix is a two-key sweep's cost matrix: rows the first key's
// values, columns the second's.
func sweepMatrix(axes []report.Axis, points []experiment.Spec, runs []report.RunSummary) *report.Matrix {
	at := map[string]int{}
	for i, p := range points {
		at[p.Name] = i
	}
	nc := len(axes[1].Values)
	return report.NewMatrix(axes[0], axes[1], runs, func(r report.RunSummary) (string, string) {
		i := at[r.Policy] // GridPoints varies the last key fastest
		return axes[0].Values[i/nc], axes[1].Values[i%nc]
	})
}

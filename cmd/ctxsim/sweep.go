package main

import (
	"math"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "sweep",
		summary: "replay traces under a grid of settings of one policy; resumable",
		usage:   "--policy P --grid KEY=V1,V2,... [--grid ...] [PATH...] [--profile P]... [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			sw := sweepFlags{fs: fs}
			sw.add(fs, "a setting and the values to sweep, key=v1,v2,...; repeatable (the cross product runs)", "(grid point, tenant) cells", func() {
				fs.Lookup("out").Usage = "directory to write cells.jsonl (as cells finish), sweep.json and summary.json to"
				fs.BoolVar(&sw.resume, "resume", false, "continue the interrupted sweep in --out, skipping finished cells")
				fs.StringVar(&sw.plots, "plots", "", "directory to write cost and hit-rate heatmaps to (exactly two --grid keys)")
			})
			return func(e *env, args []string) error {
				sw.wf.traces = append(sw.wf.traces, args...) // PATH... and --trace PATH are one list
				if err := sw.sh.parse(sw.of.out); err != nil {
					return err
				}
				return runSweep(e, &sw)
			}
		},
	})
}

// sweepFlags are the flags of sweep and tune: the grid commands.
type sweepFlags struct {
	fs          *pflag.FlagSet
	wf          workloadFlags
	sf          simFlags
	of          outFlags
	grid, keep  []string
	resume      bool
	plots, emit string
	maxCells    int
	folds       int
	sh          shardFlags
}

// add declares the flags sweep and tune share: the workload, the replay
// settings, --grid, the output, the command's own (own), --max-cells and
// --shard.
func (sw *sweepFlags) add(fs *pflag.FlagSet, gridUsage, shardUnit string, own func()) {
	sw.wf.add(fs, true)
	sw.sf.add(fs, "", true)
	fs.Lookup("policy").Usage = "the base policy: a preset (see ctxsim policies) or a .yaml/.json config; required"
	fs.StringArrayVar(&sw.grid, "grid", nil, gridUsage)
	sw.of.add(fs)
	own()
	fs.Var(numflag.Int(&sw.maxCells, runner.DefaultMaxCells, numflag.IntRange{Lo: 1, Hi: math.MaxInt}), "max-cells", "the most cells (grid points × tenants) to run; a larger grid is refused")
	sw.sh.flag(fs, shardUnit)
}

// prepare is what sweep and tune do before their cells run: the output
// format, the runner, a shard's identity, and the sessions, warned of
// thresholds hermes would clamp.
func (sw *sweepFlags) prepare(e *env, cmd string, axes []results.Axis, render any) (report.Format, *runner.Runner, []*traces.Session, shard.Manifest, error) {
	format, st, man, err := sw.sf.start(e, &sw.of.formatFlags, &sw.sh, sw.fs, cmd, sw.wf.traces, len(sw.wf.traces) == 0 && len(sw.wf.profiles) == 0, render)
	if err != nil {
		return "", nil, nil, man, err
	}
	sw.wf.shard = sw.sh.sp
	sessions, err := sw.wf.load(e, sw.sf.Seed)
	if err != nil {
		return "", nil, nil, man, err
	}
	warnAll(e, runner.ClampWarnings(sw.sf.sets, axes, sessions, st.Prices))
	return format, st, sessions, man, nil
}

func runSweep(e *env, sw *sweepFlags) error {
	switch {
	case len(sw.sf.policies) == 0:
		return usagef("--policy: sweep needs the base policy (a preset or a .yaml/.json config)")
	case len(sw.sf.policies) > 1:
		return usagef("--policy: sweep takes one base policy, got %d", len(sw.sf.policies))
	case sw.resume && sw.of.out == "":
		return usagef("--resume needs --out DIR, the sweep to continue")
	}
	grid, err := runner.NewGrid(sw.sf.policies[0], sw.sf.sets, sw.grid, sw.maxCells)
	if err != nil {
		return err
	}
	warnAll(e, grid.Warnings)
	if sw.plots != "" && len(grid.Axes) != 2 {
		return usagef("--plots: the heatmaps need exactly two --grid keys, got %d", len(grid.Axes))
	}
	render := grid.Render()
	format, st, sessions, man, err := sw.prepare(e, "sweep", grid.Axes, render)
	if err != nil {
		return err
	}
	var journal runner.SweepJournal
	var resumed func(done, of int)
	if sw.of.out != "" {
		d := runner.SweepDir{Dir: sw.of.out, Resume: sw.resume, Flags: flagValues(sw.fs, notIdentity), PricesFile: sw.sf.Prices, Wrap: e.journal, Log: e.stderr}
		journal, resumed = d.Journal(grid, sessions), d.Resumed
	}
	o := runner.Console(e.stderr, sw.sf.jobs, sw.sh.sp)
	o.Stubs, o.MaxCells = sw.wf.stubs, sw.maxCells
	rp, cellErr := runner.Sweep(e.ctx, st, sessions, grid.Points, o, journal, resumed)
	if runner.Stopped(cellErr) {
		return cellErr
	}
	if err := runner.WriteSweep(sw.of.out, sw.plots, render, rp.Runs, rp.Labels, e.warn.List()); err != nil {
		return err
	}
	if err := report.WriteSweep(e.stdout, format, render, rp.Runs, e.warn.List()); err != nil {
		return err
	}
	return sw.sh.finish(sw.of.out, man, e.warn.List(), e.failed, rp.Entries, cellErr)
}

// notIdentity are the flags left out of the sweep's identity: output and
// parallelism, and the grid, policy, workload and prices flags, which are
// hashed by their effect (the cells' settings, the sessions, the file). A
// flag added later is in the identity by default, which is the safe side.
var notIdentity = map[string]bool{
	"jobs": true, "json": true, "format": true, "out": true, "resume": true, "plots": true, "help": true, "max-cells": true,
	"grid": true, "policy": true, "policies": true, "set": true, "wide": true,
	"trace": true, "profile": true, "sessions": true, "from": true, "prices": true,
}

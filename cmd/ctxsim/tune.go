package main

import (
	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/runner"
)

func init() {
	register(&command{
		name:    "tune",
		summary: "recommend a policy's settings for your sessions, with the saving on sessions it was not chosen on",
		usage:   "--policy P [PATH...] [--grid KEY=V1,V2,...]... [--keep METRIC>=X]... [--folds K] [--emit FILE] [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			t := sweepFlags{fs: fs}
			t.add(fs, "the settings to search, key=v1,v2,...; repeatable (default: the preset's search space, docs/tune.md)", "(setting, tenant) cells", func() {
				fs.Lookup("out").Usage = "directory to write summary.json, tune.json, report.html and recommended.yaml to"
				fs.Lookup("json").Usage = "print the tune as JSON, tune.json (same as --format json)"
				fs.StringArrayVar(&t.keep, "keep", nil, "a constraint no recommended setting may break on any fold, METRIC>=X or METRIC<=X (docs/tune.md); repeatable")
				fs.IntVar(&t.folds, "folds", runner.DefaultFolds, "folds the session groups are split into (a session stays with its subagents)")
				fs.StringVar(&t.emit, "emit", "", "write the recommended setting to `FILE`: a hermes config.yaml fragment for the hermes presets, else a policy file (--policy FILE reads either)")
			})
			return func(e *env, args []string) error {
				t.wf.traces = append(t.wf.traces, args...)
				if err := t.sh.parse(t.of.out); err != nil {
					return err
				}
				if t.emit != "" && t.sh.sp.Sharded() {
					return usagef("--emit needs every shard's runs: ctxsim merge writes recommended.yaml to its --out")
				}
				return runTune(e, &t)
			}
		},
	})
}

func runTune(e *env, t *sweepFlags) error {
	tp, err := runner.NewTunePlan(t.sf.policies, t.sf.sets, t.grid, t.keep, t.folds, t.sf.Seed, t.maxCells)
	if err != nil {
		return err
	}
	warnAll(e, tp.Grid.Warnings)
	format, st, sessions, man, err := t.prepare(e, "tune", tp.Grid.Axes, tp.Render)
	if err != nil {
		return err
	}
	o := runner.Console(e.stderr, t.sf.jobs, t.sh.sp)
	o.Stubs, o.MaxCells = t.wf.stubs, t.maxCells
	tr, rp, err := runner.Tune(e.ctx, st, sessions, tp, o, e.warn.List())
	switch {
	case runner.Stopped(err), tr == nil && !t.sh.sp.Sharded():
		return err
	case t.sh.sp.Sharded():
		return t.sh.finish(t.of.out, man, e.warn.List(), e.failed, rp.Entries, err)
	}
	if oerr := tr.Output(e.stdout, format, t.of.out, t.emit); oerr != nil {
		return oerr
	}
	return err
}

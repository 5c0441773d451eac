package main

import (
	"errors"
	"strings"

	"github.com/ctxsim/ctxsim/runner"
	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "fidelity",
		summary: "how closely the replay reproduces real bills: the error distribution over every session found",
		usage:   "PATH... [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of formatFlags
			var from, out string
			addFrom(fs, &from)
			worst := fs.Int("worst", 10, "how many of the worst sessions to list (0: all)")
			addPrices(fs, &sf.Prices)
			addJobs(fs, &sf.jobs)
			// The report has no regret column: solving optima would be
			// work nobody reads.
			sf.Provider, sf.Seed, sf.NoHindsight = "auto", 1, true
			of.add(fs, "print the report as JSON")
			var sh shardFlags
			sh.flag(fs, "sessions (each with its subagents)")
			addShardOut(fs, &out)
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH (a log file or directory)")
				}
				if *worst < 0 {
					return usagef("--worst %d: want 0 or more", *worst)
				}
				if err := sh.parse(out); err != nil {
					return err
				}
				if out != "" && !sh.sp.Sharded() {
					return usagef("--out is where a --shard writes its part; fidelity prints its report")
				}
				return runFidelity(e, fs, args, from, *worst, &sf, &of, &sh, out)
			}
		},
	})
}

func runFidelity(e *env, fs *pflag.FlagSet, paths []string, from string, worst int, sf *simFlags, of *formatFlags, sh *shardFlags, out string) error {
	render := runner.FidelityRender{Worst: worst}
	format, st, m, err := sf.start(e, of, sh, fs, "fidelity", paths, false, render)
	if err != nil {
		return err
	}
	l, err := load(e, runner.Workload{Paths: paths, From: from, Shard: sh.sp})
	if err != nil {
		return err
	}
	o := runner.Console(e.stderr, sf.jobs, sh.sp)
	o.Stubs = l.Stubs
	rep, rp, cellErr := runner.Fidelity(e.ctx, st, l.Sessions, o)
	if errors.Is(cellErr, runner.ErrNoCells) {
		return noSessions(e, "no session under %s carries recorded usage", strings.Join(paths, ", "))
	}
	if runner.Stopped(cellErr) {
		return cellErr
	}
	rep.Warnings = e.warn.List()
	if err := render.Print(e.stdout, format, rep); err != nil {
		return err
	}
	return sh.finish(out, m, rep.Warnings, e.failed, rp.Entries, cellErr)
}

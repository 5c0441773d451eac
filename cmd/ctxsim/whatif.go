package main

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/report/progress"
	"github.com/ctxsim/ctxsim/runner"
)

func init() {
	register(&command{
		name:    "whatif",
		summary: "what recorded sessions cost, and what they would have cost under other policies",
		usage:   "PATH... [--policies a,b,c] [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of outFlags
			var from string
			addFrom(fs, &from)
			sf.add(fs, "the what-if variants: "+strings.Join(runner.VariantNames(), ", "), false)
			of.add(fs)
			fs.Lookup("json").Usage = "print the what-if report (sessions, policies, savings) as JSON (same as --format json)"
			var sh shardFlags
			sh.flag(fs, "(policy, session group) cells")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH (a log file or directory)")
				}
				if err := sh.parse(of.out); err != nil {
					return err
				}
				return runWhatif(e, fs, args, from, &sf, &of, &sh)
			}
		},
	})
}

func runWhatif(e *env, fs *pflag.FlagSet, paths []string, from string, sf *simFlags, of *outFlags, sh *shardFlags) error {
	pols, err := runner.WhatifPolicies(sf.policies, sf.sets)
	if err != nil {
		return err
	}
	warnAll(e, runner.PolicyWarnings(pols))
	render := runner.WhatifRender{Policies: append([]string{runner.RecordedObserved().Name}, runner.PolicyNames(pols)...)}
	format, st, m, err := sf.start(e, &of.formatFlags, sh, fs, "whatif", paths, false, render)
	if err != nil {
		return err
	}
	meter := progress.ForTerminal(e.stderr, time.Now, format != report.JSON) // a line in sessions
	defer meter.Finish()
	l, err := load(e, runner.Workload{Paths: paths, From: from, Progress: meter.Read})
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if len(sessions) == 0 {
		return noSessions(e, "no sessions found under %s", strings.Join(paths, ", "))
	}
	o := runner.Console(e.stderr, sf.jobs, sh.sp).Sessions(meter)
	o.Records = of.out != ""
	st.SkipOpenLoop = !o.Records // its tables show no open-loop figure
	rp, cellErr := runner.Whatif(e.ctx, st, sessions, pols, o)
	if runner.Stopped(cellErr) {
		return cellErr
	}
	res := rp.Outputs("ctxsim whatif", st, e.warn.List())
	if err := res.Write(of.out, ""); err != nil {
		return err
	}
	if err := render.Print(e.stdout, format, res); err != nil {
		return err
	}
	return sh.finish(of.out, m, res.Warnings, e.failed, rp.Entries, cellErr)
}

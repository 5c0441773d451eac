package main

import (
	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/runner"
)

func init() {
	register(&command{
		name:    "compare",
		summary: "replay traces under policies and compare cost, hit rate, occupancy, latency",
		usage:   "[PATH...] [--profile P]... [--policy NAME]... [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			wf.add(fs, true)
			sf.add(fs, "every preset, and recorded", true)
			of.add(fs)
			plots := fs.String("plots", "", "directory to write the figures to (SVG and PNG)")
			detail := fs.Bool("detail", false, "one row per (session, policy) even for the embedded suite")
			var sh shardFlags
			sh.flag(fs, "tenants")
			return func(e *env, args []string) error {
				wf.traces = append(wf.traces, args...) // PATH... and --trace PATH are one list
				if err := sh.parse(of.out); err != nil {
					return err
				}
				return runCompare(e, fs, &wf, &sf, &of, *plots, *detail, &sh)
			}
		},
	})
}

func runCompare(e *env, fs *pflag.FlagSet, wf *workloadFlags, sf *simFlags, of *outFlags, plots string, detail bool, sh *shardFlags) error {
	pols, err := runner.ComparePolicies(sf.policies, sf.sets)
	if err != nil {
		return err
	}
	warnAll(e, runner.PolicyWarnings(pols))
	suite := len(wf.traces) == 0 && len(wf.profiles) == 0
	render := runner.CompareRender{Policies: runner.PolicyNames(pols), Suite: suite, Detail: detail}
	format, st, m, err := sf.start(e, &of.formatFlags, sh, fs, "compare", wf.traces, suite, render)
	if err != nil {
		return err
	}
	wf.shard = sh.sp
	sessions, err := wf.load(e, sf.Seed)
	if err != nil {
		return err
	}
	o := runner.Console(e.stderr, sf.jobs, sh.sp)
	o.Stubs, o.Records = wf.stubs, of.out != "" || plots != ""
	rp, cellErr := runner.Compare(e.ctx, st, sessions, pols, o)
	if runner.Stopped(cellErr) {
		return cellErr
	}
	warnAll(e, runner.ClampWarnings(sf.sets, nil, sessions, st.Prices))
	res := rp.Outputs("ctxsim compare", st, e.warn.List())
	if err := res.Write(of.out, plots); err != nil {
		return err
	}
	if err := render.Print(e.stdout, format, res); err != nil {
		return err
	}
	return sh.finish(of.out, m, res.Warnings, e.failed, rp.Entries, cellErr)
}

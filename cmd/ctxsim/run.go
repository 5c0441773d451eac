package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "run",
		summary: "replay one trace under one policy and print its summary",
		usage:   "PATH [--policy NAME] [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			wf.add(fs, false)
			fs.Lookup("trace").Usage = "the trace file or directory (the same as the PATH argument): native, Claude Code, Codex or hermes state.db told apart by content (else --from)"
			sf.add(fs, "recorded for recorded traces, else hermes-default", true)
			fs.Lookup("policy").Usage = "the policy: a preset (see ctxsim policies), \"recorded\", \"as-sent\" (captures), or a .yaml/.json config; one (compare takes several)"
			of.add(fs)
			plots := fs.String("plots", "", "directory to write the figures to (SVG and PNG)")
			hs := fs.Bool("hindsight", false, "print, call by call, the breakpoints and TTLs of the cheapest cache schedule of the run's requests beside the policy's, marking where they differ")
			return func(e *env, args []string) error {
				wf.traces = append(wf.traces, args...) // PATH and --trace PATH are one list
				if len(wf.traces) != 1 {
					return usagef("want exactly one trace (PATH or --trace PATH)")
				}
				if len(sf.policies) > 1 {
					return usagef("want one --policy (use compare for several)")
				}
				if *hs && sf.NoHindsight {
					return usagef("--hindsight needs the hindsight optimum: drop --no-hindsight")
				}
				return runRun(e, &wf, &sf, &of, *plots, *hs)
			}
		},
	})
}

func runRun(e *env, wf *workloadFlags, sf *simFlags, of *outFlags, plots string, showHS bool) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	l, err := load(e, runner.Workload{Paths: wf.traces, From: wf.from})
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if len(sessions) == 0 {
		return noSessions(e, "%s: no sessions", wf.traces[0])
	}
	var name string
	if len(sf.policies) == 1 {
		name = sf.policies[0]
	}
	rp, res, err := runner.ReplayTrace(e.ctx, st, sessions, name, sf.sets, runner.Console(e.stderr, 1, shard.Spec{}))
	if err != nil {
		return err
	}
	warnAll(e, rp.PolicyWarnings)
	if err := rp.Outputs("ctxsim run", st, e.warn.List()).Write(of.out, plots); err != nil {
		return err
	}
	if !showHS {
		return report.WriteRun(e.stdout, format, rp.Runs, e.warn.List(), nil, nil)
	}
	if res.Hindsight == nil {
		return fmt.Errorf("--hindsight: the provider (%s) is not Anthropic's, or --clear-tool-uses is on: the caller chooses no cache schedule", st.ProviderFor(rp.Cells[0].Tenant))
	}
	return report.WriteRun(e.stdout, format, rp.Runs, e.warn.List(), res.Tape, res.Hindsight)
}

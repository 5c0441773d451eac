package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
)

func init() {
	register(&command{
		name:    "run",
		summary: "replay one trace under one policy and print its summary",
		usage:   "PATH [--policy NAME] [flags]",
		help: `Run replays one trace (a session and its subagents; or every session of a
recorded directory, as one tenant) under one policy and prints what it cost:
tokens and dollars by class, cache hit rate, occupancy, compactions and
latency. When the trace carries recorded usage (Claude Code, Codex logs) the
recorded figures and the simulation's error stand beside the simulated ones.

Examples:
  ctxsim run testdata/claude-code/short.jsonl --policy recorded
  ctxsim run testdata/claude-code --policy claude-code --json
  ctxsim run trace.jsonl --policy hermes-micro --set compression.micro_compact_every_n_turns=5
  ctxsim run --trace trace.jsonl --policy my-policy.yaml --out out/
  ctxsim run testdata/claude-code/tool_heavy.jsonl --hindsight`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			fs.StringArrayVar(&wf.traces, "trace", nil, "trace file or directory: native, Claude Code, Codex or hermes state.db told apart by content (else --from)")
			fs.StringVar(&wf.from, "from", "", "force the format of --trace (native, claude-code, codex, hermes, chatlog)")
			sf.add(fs, "recorded for recorded traces, else hermes-default")
			fs.Lookup("policy").Usage = "the policy: a preset (see ctxsim policies), \"recorded\", or a .yaml/.json config; one (compare takes several)"
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
				if *hs && sf.noHindsight {
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
	l, err := load(e, harness.Workload{Paths: wf.traces, From: wf.from})
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if len(sessions) == 0 {
		return noSessions(e, "%s: no sessions", wf.traces[0])
	}
	for _, s := range sessions {
		s.Tenant = "run"
	}
	g := experiment.Tenants(sessions)[0]
	names := sf.policies
	if len(names) == 0 {
		names = []string{"hermes-default"}
		if g.HasRecorded() {
			names = []string{sim.RecordedName}
		}
	}
	specs, err := experiment.ResolvePolicies(names, sf.sets)
	if err != nil {
		return err
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells([]experiment.Tenant{g}, specs)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return usagef("policy %s needs a trace with recorded usage", specs[0].Name)
	}
	var runs []report.RunSummary
	var recs []sim.Record
	var res *experiment.Result
	o, finish := runOptions(e, 1, shard.Spec{})
	o.Start(len(cells))
	err = st.Each(e.ctx, cells, 1, nil, o.Done, o.Failed, func(c *experiment.Cell) {
		runs, recs, res = c.Result.Runs, c.Result.Records, c.Result
	})
	finish()
	if err != nil {
		return err
	}
	out := &experiment.Outputs{Title: "ctxsim run", Seed: st.Seed, Runs: runs, Records: recs, Labels: experiment.Labels(cells),
		Price: experiment.FirstPrice(st.Prices, recs), Warnings: e.warn.List()}
	if err := out.Write(of.out, plots); err != nil {
		return err
	}
	if !showHS {
		return report.WriteRun(e.stdout, format, runs, e.warn.List(), nil, nil)
	}
	if res.Hindsight == nil {
		return fmt.Errorf("--hindsight: the provider (%s) is not Anthropic's, or --clear-tool-uses is on: the caller chooses no cache schedule", st.ProviderFor(g))
	}
	return report.WriteRun(e.stdout, format, runs, e.warn.List(), res.Tape, res.Hindsight)
}

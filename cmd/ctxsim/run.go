package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
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
  ctxsim run --trace trace.jsonl --policy my-policy.yaml --out out/`,
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
			return func(e *env, args []string) error {
				wf.traces = append(wf.traces, args...) // PATH and --trace PATH are one list
				if len(wf.traces) != 1 {
					return usagef("want exactly one trace (PATH or --trace PATH)")
				}
				if len(sf.policies) > 1 {
					return usagef("want one --policy (use compare for several)")
				}
				return runRun(e, &wf, &sf, &of, *plots)
			}
		},
	})
}

func runRun(e *env, wf *workloadFlags, sf *simFlags, of *outFlags, plots string) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	sessions, warn, err := loadTraces(e, wf.traces, wf.from)
	if err != nil {
		return err
	}
	if warn.Len() > 0 {
		printWarnings(e, warn)
	}
	if len(sessions) == 0 {
		return fmt.Errorf("%s: no sessions", wf.traces[0])
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
	specs, err := resolvePolicies(names, sf.sets)
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
	if err := runCells(e, st, cells, 1, nil, func(c *experiment.Cell) {
		runs, recs = c.Result.Runs, c.Result.Records
	}); err != nil {
		return err
	}
	res := &results{title: "ctxsim run", seed: st.Seed, runs: runs, recs: recs, labels: labels(cells), price: firstPrice(st, recs), warnings: e.warn.List()}
	if err := res.write(of.out, plots); err != nil {
		return err
	}
	if format == report.JSON {
		return report.WriteResults(e.stdout, report.Results{Runs: runs, Warnings: e.warn.List()})
	}
	for _, r := range runs {
		if err := report.RunBill(r).Write(e.stdout, format); err != nil {
			return err
		}
		if format == report.Text || format == report.Markdown {
			report.WriteRunFacts(e.stdout, r)
		}
	}
	return nil
}

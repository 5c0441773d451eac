package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
)

func init() {
	var variants strings.Builder
	for _, v := range experiment.Variants() {
		fmt.Fprintf(&variants, "  %-16s %s\n", v.Name, v.Help)
	}
	register(&command{
		name:    "whatif",
		summary: "what recorded sessions cost, and what they would have cost under other policies",
		usage:   "PATH... [--policies a,b,c] [flags]",
		help: `Whatif replays recorded sessions (Claude Code logs, Codex rollouts, native
traces with usage) as they happened, calibrated on their own billed calls,
then under each policy, and prints per session the recorded cost, each
policy's simulated cost and its savings, and the best policy.

Each counterfactual uses the recorded replay's calibration: its prompt is the
recorded prompt plus the calibrated size of what the policy changed. The
"recorded" column is what the provider billed; "replay" is the simulation of
the recorded behaviour (recorded-observed: it also honours the re-sends and
the reads past the TTL the log shows and cannot explain, which every variant
then replays too), and
"error" its own error against the bill. A change no larger than that error
is marked ~ (within_error in --json): the error could explain it. See ctxsim
fidelity for the error distribution over many sessions. "hindsight" is the
replay's requests under the cheapest cache schedule any harness could have
chosen, and "replay regret" what the replayed schedule paid over it (--json
adds every policy's regret_usd; docs/metrics.md defines them).

Default policies (variants of the recorded behaviour):
` + variants.String() + `
Any preset (ctxsim policies) or .yaml/.json policy can be named too; those
replace the recorded behaviour entirely (their own cache layout and
compaction).

Examples:
  ctxsim whatif ~/.claude/projects
  ctxsim whatif ~/.claude/projects/-home-me-proj --policies ttl-1h,prune-on-resume
  ctxsim whatif session.jsonl --policies hermes-default,masking-batched --json
  ctxsim whatif --from codex ~/.codex/sessions`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of outFlags
			from := fs.String("from", "", "force the log format (native, claude-code, codex, hermes, chatlog)")
			var picked []string
			fs.StringArrayVar(&picked, "policy", nil, "a policy to compare; repeatable (default: "+strings.Join(experiment.VariantNames(), ", ")+")")
			addPolicyAlias(fs, &picked)
			fs.StringArrayVar(&sf.sets, "set", nil, "override a setting of every policy, key=value; repeatable")
			fs.StringVar(&sf.provider, "provider", "auto", "fake provider: anthropic, openai, deepseek, gemini, vllm, or auto (the provider of each trace's model)")
			fs.StringVar(&sf.prices, "prices", "", "LiteLLM price file to override or extend the rate card")
			fs.Uint64Var(&sf.seed, "seed", 1, "seed of every random choice")
			fs.IntVarP(&sf.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "parallel replays; output is identical for any value")
			sf.addCache(fs)
			addVLLMFlags(fs, &sf)
			fs.BoolVar(&sf.noHindsight, "no-hindsight", false, "skip the hindsight optimum (the cheapest cache schedule of the replay's requests) and the regrets")
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
				names := picked
				if len(names) == 0 {
					names = experiment.VariantNames()
				}
				return runWhatif(e, fs, args, *from, names, &sf, &of, &sh)
			}
		},
	})
}

func runWhatif(e *env, fs *pflag.FlagSet, paths []string, from string, names []string, sf *simFlags, of *outFlags, sh *shardFlags) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	specs, err := experiment.WhatifSpecs(names, sf.sets)
	if err != nil {
		return err
	}
	render := harness.WhatifRender{Policies: append([]string{experiment.RecordedObserved().Name}, experiment.SpecNames(specs)...)}
	m, err := sh.manifest(fs, "whatif", sf.seed, paths, false, sf.prices, render)
	if err != nil {
		return err
	}
	l, err := load(e, harness.Workload{Paths: paths, From: from})
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if len(sessions) == 0 {
		return noSessions(e, "no sessions found under %s", strings.Join(paths, ", "))
	}
	o := runOptions(e, sf.jobs, sh.sp)
	o.Records = of.out != ""
	st.SkipOpenLoop = !o.Records // its tables show no open-loop figure
	rp, cellErr := harness.Whatif(e.ctx, st, sessions, specs, o)
	if harness.Stopped(cellErr) {
		return cellErr
	}
	res := rp.Outputs("ctxsim whatif", st, e.warn.List())
	if err := res.Write(of.out, ""); err != nil {
		return err
	}
	if err := render.Print(e.stdout, format, res); err != nil {
		return err
	}
	return sh.finish(of.out, m, res.Warnings, rp.Parts, cellErr)
}

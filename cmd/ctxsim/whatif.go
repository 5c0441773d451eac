package main

import (
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
)

func init() {
	register(&command{
		name:    "whatif",
		summary: "what recorded sessions cost, and what they would have cost under other policies",
		usage:   "PATH... [--policies a,b,c] [flags]",
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
				return runWhatif(e, fs, args, *from, picked, &sf, &of, &sh)
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
	warnPolicy(e, experiment.SpecWarnings(specs))
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

package main

import (
	"errors"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/harness"
)

func init() {
	register(&command{
		name:    "fidelity",
		summary: "how closely the replay reproduces real bills: the error distribution over every session found",
		usage:   "PATH... [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var sf simFlags
			var of formatFlags
			from := fs.String("from", "", "force the log format (native, claude-code, codex, hermes, chatlog)")
			worst := fs.Int("worst", 10, "how many of the worst sessions to list (0: all)")
			fs.StringVar(&sf.prices, "prices", "", "LiteLLM price file to override or extend the rate card")
			fs.IntVarP(&sf.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "parallel replays; output is identical for any value")
			sf.provider, sf.seed = "auto", 1
			of.add(fs, "print the report as JSON")
			var sh shardFlags
			sh.flag(fs, "sessions (each with its subagents)")
			out := fs.StringP("out", "o", "", "with --shard: the directory to write the shard's part to, for ctxsim merge")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH (a log file or directory)")
				}
				if *worst < 0 {
					return usagef("--worst %d: want 0 or more", *worst)
				}
				if err := sh.parse(*out); err != nil {
					return err
				}
				if *out != "" && !sh.sp.Sharded() {
					return usagef("--out is where a --shard writes its part; fidelity prints its report")
				}
				return runFidelity(e, fs, args, *from, *worst, &sf, &of, &sh, *out)
			}
		},
	})
}

func runFidelity(e *env, fs *pflag.FlagSet, paths []string, from string, worst int, sf *simFlags, of *formatFlags, sh *shardFlags, out string) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	render := harness.FidelityRender{Worst: worst}
	m, err := sh.manifest(fs, "fidelity", sf.seed, paths, false, sf.prices, render)
	if err != nil {
		return err
	}
	l, err := load(e, harness.Workload{Paths: paths, From: from, Shard: sh.sp})
	if err != nil {
		return err
	}
	o := runOptions(e, sf.jobs, sh.sp)
	o.Stubs = l.Stubs
	rep, rp, cellErr := harness.Fidelity(e.ctx, st, l.Sessions, o)
	if errors.Is(cellErr, harness.ErrNoCells) {
		return noSessions(e, "no session under %s carries recorded usage", strings.Join(paths, ", "))
	}
	if harness.Stopped(cellErr) {
		return cellErr
	}
	if err := render.Print(e.stdout, format, rep); err != nil {
		return err
	}
	return sh.finish(out, m, nil, rp.Parts, cellErr) // fidelity reports no warnings
}

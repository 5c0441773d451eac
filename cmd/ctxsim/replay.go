package main

import (
	"cmp"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// The plumbing the replay commands share: what they load, the runner
// they set up, the caches it keeps, and a shard's identity and part.

// workloadFlags select the traces of compare, sweep and check.
type workloadFlags struct {
	traces   []string
	profiles []string
	sessions int
	from     string
	// shard, when set, makes load read native traces by header only;
	// stubs then reads the owned ones in full.
	shard shard.Spec
	stubs *traces.Stubs
}

// add declares --trace and --from, and with profiles --profile and
// --sessions.
func (w *workloadFlags) add(fs *pflag.FlagSet, profiles bool) {
	fs.StringArrayVar(&w.traces, "trace", nil, "trace file or directory (the same as a PATH argument): native, Claude Code, Codex or hermes state.db told apart by content (else --from); repeatable")
	if profiles {
		fs.StringArrayVar(&w.profiles, "profile", nil, "synthetic workload profile (see ctxsim gen --list); repeatable")
		fs.Var(numflag.Int(&w.sessions, runner.SuitePerProfile, numflag.IntRange{Lo: 1, Hi: synth.MaxSessions}), "sessions", "sessions per --profile")
	}
	addFrom(fs, &w.from)
}

// load returns the selected sessions (runner.Load); with nothing
// selected, the embedded suite: the recorded Claude Code sessions and
// sessions of every profile.
func (w *workloadFlags) load(e *env, seed uint64) ([]*traces.Session, error) {
	l, err := load(e, runner.Workload{Paths: w.traces, From: w.from, Profiles: w.profiles, PerProfile: w.sessions, Seed: seed, Shard: w.shard})
	if err != nil {
		return nil, err
	}
	if len(l.Sessions) == 0 {
		return nil, noSessions(e, "no sessions to replay")
	}
	w.stubs = l.Stubs
	return l.Sessions, nil
}

// setup is the runner the flags set, its caches open.
func (f *simFlags) setup(e *env) (*runner.Runner, error) {
	rn, err := f.Runner()
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(f.cacheDir, e.cacheDir) // --cache-dir, else the default
	if f.noCache {
		dir = ""
	}
	if err := openCaches(e, rn, dir); err != nil {
		return nil, err
	}
	return rn, nil
}

// start is a replay command's first steps: the output format, the runner
// (setup) and, for a shard, the run's identity (shardFlags.manifest).
func (f *simFlags) start(e *env, of *formatFlags, sh *shardFlags, fs *pflag.FlagSet, cmd string, paths []string, suite bool, render any) (report.Format, *runner.Runner, shard.Manifest, error) {
	format, err := of.parse()
	if err != nil {
		return "", nil, shard.Manifest{}, err
	}
	rn, err := f.setup(e)
	if err != nil {
		return "", nil, shard.Manifest{}, err
	}
	m, err := sh.manifest(fs, cmd, f.Seed, paths, suite, f.Prices, render)
	return format, rn, m, err
}

// outFlags say where results go.
type outFlags struct {
	formatFlags
	out string
}

func (o *outFlags) add(fs *pflag.FlagSet) {
	o.formatFlags.add(fs, "print summary.json to stdout (same as --format json)")
	fs.StringVarP(&o.out, "out", "o", "", "directory to write records.jsonl, summary.json and report.html to")
}

// load loads w (runner.Load) with stdin for "-", prints its warnings on
// stderr and adds them to the run's: a session that cannot be loaded
// (Warnings.Fail) is counted in e.failed, so the command goes on with the
// rest and exits 1; one with no model call, in e.noCall.
func load(e *env, w runner.Workload) (*runner.Loaded, error) {
	w.Stdin = e.stdin
	if e.importCache != nil {
		w.Cache = e.importCache
	}
	l, err := runner.Load(e.ctx, w)
	if err != nil {
		return nil, err
	}
	e.noCall += l.Callless
	e.failed += l.Warnings.Failed()
	e.warn.Merge(l.Warnings)
	if l.Warnings.Len() > 0 {
		printWarnings(e, l.Warnings)
	}
	return l, nil
}

// openCaches opens the caches in dir for rn's run (runner.OpenCacheDir):
// what cannot be opened is a note, and their warnings print at exit.
func openCaches(e *env, rn *runner.Runner, dir string) error {
	c, notes, err := runner.OpenCacheDir(rn, dir, runner.CacheOptions{Now: time.Now, Tokenizer: e.tokenizer})
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "ctxsim: note: %s\n", safetext.Lines(n))
	}
	e.importCache = c.Imports
	e.atExit = append(e.atExit, func() {
		if e.importStats != nil && c.Imports != nil {
			*e.importStats = c.Imports.Stats()
		}
		if e.solveStats != nil && c.Solved != nil {
			*e.solveStats = c.Solved.Stats()
		}
		for _, w := range c.Close() {
			fmt.Fprintf(e.stderr, "ctxsim: warning: %s\n", safetext.Lines(w))
		}
	})
	return err
}

// shardFlags is --shard K/N.
type shardFlags struct {
	spec string
	sp   shard.Spec
}

func (f *shardFlags) flag(fs *pflag.FlagSet, unit string) {
	fs.StringVar(&f.spec, "shard", "", "run only shard K of N (1 ≤ K ≤ N): the "+unit+" whose identity hashes there; needs --out; ctxsim merge joins the shards (docs/scale.md)")
}

// parse checks --shard; a shard needs an output directory for merge.
func (f *shardFlags) parse(out string) error {
	sp, err := shard.Parse(f.spec)
	if err != nil {
		return usagef("--shard %v", err)
	}
	if sp.Sharded() && out == "" {
		return usagef("--shard needs --out DIR: a shard writes its part there, for ctxsim merge")
	}
	f.sp = sp
	return nil
}

// finish writes the shard's part (shard.WriteDir) once every cell ran:
// with cellErr, cells failed and the part is not written, so the run does
// not merge. failed is how many sessions the shard could not load (the
// env's), for the merged run's exit code.
func (f *shardFlags) finish(dir string, m shard.Manifest, warnings []traces.Warning, failed int, cells []shard.Entry, cellErr error) error {
	if cellErr != nil {
		return cellErr
	}
	m.Failed = failed
	return shard.WriteDir(dir, f.sp, cells, m, warnings)
}

// outputOnly are the flags that change neither a result nor the table's
// content: left out of a shard's manifest, so shards may differ in them.
var outputOnly = map[string]bool{
	"out": true, "jobs": true, "shard": true, "format": true, "json": true, "help": true, "plots": true, "resume": true, "max-cells": true,
}

// manifest is the identity of a sharded run of command
// (runner.ShardManifest): every flag but outputOnly's.
func (f *shardFlags) manifest(fs *pflag.FlagSet, command string, seed uint64, paths []string, suite bool, prices string, render any) (shard.Manifest, error) {
	return runner.ShardManifest(f.sp, command, seed, flagValues(fs, outputOnly), paths, suite, prices, render)
}

// flagValues are fs's flags as name=value, in declaration order, but for
// those in skip: what identifies a run (a shard's manifest, a sweep's
// identity).
func flagValues(fs *pflag.FlagSet, skip map[string]bool) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !skip[f.Name] {
			out = append(out, f.Name+"="+f.Value.String())
		}
	})
	return out
}

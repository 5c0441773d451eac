package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
)

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
		return usagef("%v", err)
	}
	if sp.Sharded() && out == "" {
		return usagef("--shard needs --out DIR: a shard writes its part there, for ctxsim merge")
	}
	f.sp = sp
	return nil
}

// finish writes the shard's part (shard.WritePart) once every cell ran:
// with cellErr, cells failed and the part is not written, so the run does
// not merge.
func (f *shardFlags) finish(dir string, m shard.Manifest, warnings []traces.Warning, cells []shard.Cell, cellErr error) error {
	if cellErr != nil {
		return cellErr
	}
	return shard.WritePart(dir, f.sp, cells, m, warnings)
}

// outputOnly are the flags that change neither a result nor the table's
// content: left out of a shard's manifest, so shards may differ in them.
var outputOnly = map[string]bool{
	"out": true, "jobs": true, "shard": true, "format": true, "json": true, "help": true, "plots": true, "resume": true,
}

// manifest is the identity of a sharded run of command: every other flag,
// the seed, and the hashes of the inputs (shard.Inputs: stdin is a usage
// error); nothing unsharded.
func (f *shardFlags) manifest(fs *pflag.FlagSet, command string, seed uint64, paths []string, suite bool, prices string, render any) (shard.Manifest, error) {
	if !f.sp.Sharded() {
		return shard.Manifest{}, nil
	}
	in, err := shard.Inputs(paths, suite, prices)
	if errors.Is(err, shard.ErrStdin) {
		return shard.Manifest{}, usagef("%v", err)
	} else if err != nil {
		return shard.Manifest{}, err
	}
	return shard.NewManifest(command, seed, flagValues(fs, outputOnly), in, render)
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

// runOptions are a harness run's options on jobs workers, for shard sp:
// a progress bar on stderr while the cells run, and each cell that fails
// named there.
func runOptions(e *env, jobs int, sp shard.Spec) harness.Options {
	var bar progress = noProgress{}
	return harness.Options{Workers: jobs, Shard: sp,
		Start: func(todo int) { bar = newProgress(e.stderr, todo) },
		Done:  func(*experiment.Cell) { bar.Add(1) },
		Failed: func(c *experiment.Cell) {
			fmt.Fprintf(e.stderr, "ctxsim: cell %s: %v\n", c.Key(), c.Err)
		},
		End: func() { bar.Finish() },
	}
}

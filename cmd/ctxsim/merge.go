package main

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "merge",
		summary: "join the output directories of a sharded run (--shard K/N) into the run's outputs",
		usage:   "DIR... --out DIR [--format F]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var of outFlags
			of.add(fs)
			fs.Lookup("out").Usage = "directory to write the merged outputs to (all but cost, which only prints)"
			var prices string
			addPrices(fs, &prices)
			fs.Lookup("prices").Usage = "cost shards only: the --prices file the shards priced with"
			return func(e *env, dirs []string) error {
				if len(dirs) == 0 {
					return usagef("want the shard directories to merge")
				}
				for _, d := range dirs {
					if filepath.Clean(d) == filepath.Clean(of.out) {
						return usagef("--out %s is one of the shards", of.out)
					}
				}
				format, err := of.parse()
				if err != nil {
					return err
				}
				return runMerge(e, dirs, of.out, format, prices)
			}
		},
	})
}

func runMerge(e *env, dirs []string, out string, format report.Format, prices string) error {
	m, err := shard.Merge(e.ctx, dirs)
	if err != nil {
		return err
	}
	switch cmd := m.Manifest.Command; {
	case cmd == "cost", cmd == "fidelity": // they only print
	case out == "":
		return usagef("--out DIR: where to write the merged %s outputs", cmd)
	case prices != "":
		return usagef("--prices is for cost shards; %s shards carry their prices", cmd)
	}
	j, err := runner.Join(m, filepath.Join(dirs[0], shard.ManifestFile), prices)
	if err != nil {
		return err
	}
	if j.Cost != nil {
		printWarnings(e, j.CostWarnings) // stderr always, as cost prints them
	}
	if err := j.Write(out); err != nil {
		return err
	}
	e.failed += m.Failed // exit 1 as the unsharded run does
	return j.Print(e.stdout, format)
}

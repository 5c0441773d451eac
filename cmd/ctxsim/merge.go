package main

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "merge",
		summary: "join the output directories of a sharded run (--shard K/N) into the run's outputs",
		usage:   "DIR... --out DIR [--format F]",
		help: `Merge reads the output directories of the N shards of one run (compare,
whatif, sweep, fidelity or cost with --shard K/N --out DIR), in any order, and writes
to --out exactly what the run writes on one machine (summary.json,
records.jsonl, report.html, runs.parquet, records.parquet; a sweep's
summary.json and runs.parquet), and prints its table, byte for byte. Cost
and fidelity write no files: merge prints their report (for cost, give it
the shards' --prices file, if they had one).

It refuses, naming the directory, a shard that is missing or given twice,
a directory that is not a shard's output, and shards of different runs:
another N, ctxsim version, command, --seed, flag or input (each --trace
path's files and the --prices file are hashed in manifest.json). A shard
that failed writes no manifest.json, so a run with a failed shard does not
merge: rerun that shard.

The table is printed in --format (default text), as the command prints it.
See docs/scale.md for Kubernetes, GitHub Actions and GNU parallel recipes.

Examples:
  ctxsim compare traces/*.jsonl --shard 1/2 --out out/shard-1
  ctxsim compare traces/*.jsonl --shard 2/2 --out out/shard-2
  ctxsim merge out/shard-1 out/shard-2 --out out/merged
  ctxsim merge out/shard-* --out out/merged --format markdown`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var of outFlags
			of.add(fs)
			fs.Lookup("out").Usage = "directory to write the merged outputs to (all but cost, which only prints)"
			prices := fs.String("prices", "", "cost shards only: the --prices file the shards priced with")
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
				return runMerge(e, dirs, of.out, format, *prices)
			}
		},
	})
}

func runMerge(e *env, dirs []string, out string, format report.Format, prices string) error {
	m, err := shard.Merge(dirs)
	if err != nil {
		return err
	}
	switch cmd := m.Manifest.Command; {
	case cmd == "cost":
		return mergeCost(e, m, format, prices)
	case cmd == "fidelity":
	case out == "":
		return usagef("--out DIR: where to write the merged %s outputs", cmd)
	case prices != "":
		return usagef("--prices is for cost shards; %s shards carry their prices", cmd)
	}
	j, err := harness.Join(m, filepath.Join(dirs[0], shard.ManifestFile))
	if err != nil {
		return err
	}
	if err := j.Write(out); err != nil {
		return err
	}
	return j.Print(e.stdout, format)
}

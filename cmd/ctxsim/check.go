package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "check",
		summary: "compare results with a baseline; exit 1 on a regression",
		usage:   "--baseline FILE [--results FILE] [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			baseline := fs.String("baseline", "", "baseline results `FILE` (summary.json format)")
			resultsFile := fs.String("results", "", "results `FILE` to check (default: run the embedded suite)")
			tols := fs.StringArray("tolerance", nil, "per-metric tolerance, metric=value[pp|%] (repeatable)")
			update := fs.Bool("update", false, "rewrite the baseline with the current results and exit 0")
			changed := fs.Bool("changed", false, "print only rows beyond tolerance (regressions, improvements, missing and new cells)")
			markdown := fs.String("markdown", "", "also write a Markdown summary to `FILE` (e.g. for $GITHUB_STEP_SUMMARY)")
			var format formatFlags
			format.add(fs, "same as --format json")
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected arguments %q: results come from --results", args)
				}
				if *baseline == "" {
					return usagef("--baseline FILE is required")
				}
				f, err := format.parse()
				if err != nil {
					return err
				}
				tol, err := results.ParseTolerances(*tols)
				if err != nil {
					return usagef("--tolerance: %v", err)
				}
				cur, err := checkResults(e, *resultsFile)
				if err != nil {
					return err
				}
				if *update {
					if err := report.WriteSummaryFile(*baseline, cur); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "wrote baseline %s: %d cells\n", *baseline, len(cur.Runs))
					return nil
				}
				base, err := readResultsFile(*baseline, "--baseline")
				if err != nil {
					return err
				}
				rep := results.Check(base, cur, tol)
				shown := &rep
				if *changed {
					shown = rep.Changed()
				}
				if err := report.WriteCheck(e.stdout, f, shown); err != nil {
					return err
				}
				if *markdown != "" {
					if err := atomicfile.WriteFunc(*markdown, func(w io.Writer) error { return report.WriteCheckMarkdown(w, &rep) }); err != nil {
						return err
					}
				}
				if rep.Failed() {
					fails := rep.Failures()
					return &regressionError{msg: fmt.Sprintf("%d failing: %s", len(fails), strings.Join(fails, ", "))}
				}
				return nil
			}
		},
	})
}

// checkResults reads the results file at path, or with none runs the
// embedded suite under the preset policies, as "ctxsim compare" with no
// arguments does (runner.SuiteResults).
func checkResults(e *env, path string) (results.Summary, error) {
	if path != "" {
		return readResultsFile(path, "--results")
	}
	wf := workloadFlags{sessions: runner.SuitePerProfile}
	sf := simFlags{Settings: runner.Settings{Provider: "auto", Seed: 1}}
	rn, err := sf.setup(e)
	if err != nil {
		return results.Summary{}, err
	}
	sessions, err := wf.load(e, sf.Seed)
	if err != nil {
		return results.Summary{}, err
	}
	return runner.SuiteResults(e.ctx, rn, sessions, runner.Console(e.stderr, runtime.GOMAXPROCS(0), shard.Spec{}))
}

// readResultsFile reads a --results or --baseline file: one that cannot
// be read, or holds a run results.Read refuses, is a usage error (exit 2)
// naming the file and the cell.
func readResultsFile(path, flag string) (results.Summary, error) {
	res, err := results.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && flag == "--baseline":
		return res, fmt.Errorf("%s %w (create it with --update)", flag, err)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return res, usagef("%s %v", flag, err)
	}
	return res, err
}

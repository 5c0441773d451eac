package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
)

func init() {
	register(&command{
		name:    "check",
		summary: "compare results with a baseline; exit 1 on a regression",
		usage:   "--baseline FILE [--results FILE] [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			baseline := fs.String("baseline", "", "baseline results `FILE` (summary.json format)")
			results := fs.String("results", "", "results `FILE` to check (default: run the embedded suite)")
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
				tol, err := report.ParseTolerances(*tols)
				if err != nil {
					return usagef("--tolerance: %v", err)
				}
				cur, err := checkResults(e, *results)
				if err != nil {
					return err
				}
				if *update {
					if err := report.WriteFileAtomic(*baseline, func(w io.Writer) error { return report.WriteResults(w, cur) }); err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "wrote baseline %s: %d cells\n", *baseline, len(cur.Runs))
					return nil
				}
				base, err := readResultsFile(*baseline, "--baseline")
				if err != nil {
					return err
				}
				rep := report.Check(base, cur, tol)
				shown := &rep
				if *changed {
					shown = rep.Changed()
				}
				if err := shown.Write(e.stdout, f); err != nil {
					return err
				}
				if *markdown != "" {
					if err := report.WriteFileAtomic(*markdown, rep.WriteMarkdownSummary); err != nil {
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

func checkResults(e *env, path string) (report.Results, error) {
	if path != "" {
		return readResultsFile(path, "--results")
	}
	return suiteResults(e)
}

func readResultsFile(path, flag string) (report.Results, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			hint := ""
			if flag == "--baseline" {
				hint = " (create it with --update)"
			}
			return report.Results{}, fmt.Errorf("%s %s: no such file%s", flag, path, hint)
		}
		return report.Results{}, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	return report.ReadResults(f, path)
}

package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "lint native traces",
		usage:   "FILE...",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			asJSON := fs.Bool("json", false, "print the verdict of each file as JSON")
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one FILE")
				}
				return runValidate(e, args, *asJSON)
			}
		},
	})
}

func runValidate(e *env, files []string, asJSON bool) error {
	checks, bad := traces.CheckFiles(files, func(f string) (*traces.Session, error) { return traces.ReadSessionPath(f, e.stdin) })
	if err := report.WriteFileChecks(e.stdout, asJSON, checks); err != nil {
		return err
	}
	if bad > 0 {
		return &regressionError{msg: fmt.Sprintf("%d of %d files have problems", bad, len(files))}
	}
	return nil
}

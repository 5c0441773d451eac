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
		help: `Validate reads native traces and checks that they replay as written: the
format itself (a bad line stops the file), then event kinds, times that are
set and never decrease, every tool_result answering an earlier tool_use,
usage only on assistant calls and never negative, and parent/children
links (a child listed by a parent in the same run must name it as parent).

Problems are printed as file:line: reason and the exit code is 1; a good
file prints one OK line. --json prints {"files":[{"file","ok","session",
"events","calls","billed_calls","problems":[...]}]} instead.

Examples:
  ctxsim validate traces/*.jsonl
  ctxsim validate --json traces/*.jsonl
  ctxsim import claude-code ~/.claude/projects -o /tmp/t && ctxsim validate /tmp/t/*.jsonl`,
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

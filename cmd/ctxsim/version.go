package main

import (
	"fmt"

	"github.com/spf13/pflag"

	ctxsim "github.com/ctxsim/ctxsim"
)

func init() {
	register(&command{
		name:    "version",
		summary: "the module version and VCS revision of this binary",
		usage:   "",
		help: `Version prints the module version ("(devel)" when built from a clone rather
than installed with go install …@vX.Y.Z) and, when the binary was built in
a git work tree, its VCS revision, commit time and whether the tree had
uncommitted changes. "ctxsim --version" prints the same.

Examples:
  ctxsim version
  ctxsim --version`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments")
				}
				fmt.Fprintln(e.stdout, ctxsim.ThisBuild())
				return nil
			}
		},
	})
}

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

package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
)

func init() {
	register(&command{
		name:    "policies",
		summary: "list the preset policies and their settings",
		usage:   "[NAME] [--config FILE] [--set KEY=VALUE]... [--keys]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			config := fs.String("config", "", "policy file (YAML or JSON; hermes config.yaml keys)")
			sets := fs.StringArray("set", nil, "override a setting, KEY=VALUE (repeatable)")
			listKeys := fs.Bool("keys", false, "list every setting key with its allowed values")
			var format formatFlags
			format.add(fs, "same as --format json")
			return func(e *env, args []string) error {
				f, err := format.parse()
				if err != nil {
					return err
				}
				if len(args) > 1 {
					return usagef("want at most one preset NAME")
				}
				if *listKeys {
					return report.WritePolicyKeys(e.stdout, f)
				}
				if len(args) == 0 && *config == "" {
					if len(*sets) > 0 {
						return usagef("--set needs a preset NAME or --config")
					}
					return report.WritePresets(e.stdout, f)
				}
				if len(args) == 1 && *config != "" {
					return usagef("give a preset NAME or --config, not both")
				}
				var name string
				if len(args) == 1 {
					name = args[0]
				}
				c, warnings, err := runner.PolicyConfig(name, *config, *sets)
				warnAll(e, warnings)
				if err != nil {
					return err
				}
				return report.WritePolicy(e.stdout, f, &c)
			}
		},
	})
}

// warnPolicy prints a policy file's ignored keys (runner.Spec.Warnings).
func warnAll(e *env, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "warning:", safetext.Lines(w))
	}
}

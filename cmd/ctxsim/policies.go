package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
)

func init() {
	register(&command{
		name:    "policies",
		summary: "list the preset policies and their settings",
		usage:   "[NAME] [--config FILE] [--set KEY=VALUE]... [--keys]",
		help: `Policies lists the preset context-management policies with the settings in
which each differs from hermes-agent's defaults. Given a preset NAME, or a
policy file with --config (a hermes config.yaml loads as is), it prints
every setting of that policy after the --set overrides; keys the simulator
ignores are reported on stderr. --keys lists every key with its allowed
values.

Examples:
  ctxsim policies
  ctxsim policies hermes-micro --set compression.micro_compact_every_n_turns=3
  ctxsim policies --config ~/.hermes/config.yaml
  ctxsim policies --keys --format markdown
  ctxsim policies --json`,
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
					return writeKeys(e, f)
				}
				if len(args) == 0 && *config == "" {
					if len(*sets) > 0 {
						return usagef("--set needs a preset NAME or --config")
					}
					return writePresets(e, f)
				}
				if len(args) == 1 && *config != "" {
					return usagef("give a preset NAME or --config, not both")
				}
				c, err := resolvePolicy(e, args, *config, *sets)
				if err != nil {
					return err
				}
				return writePolicy(e, f, &c)
			}
		},
	})
}

// resolvePolicy loads a preset or a policy file and applies --set
// overrides; load warnings go to stderr.
func resolvePolicy(e *env, args []string, config string, sets []string) (policies.Config, error) {
	var c policies.Config
	if config != "" {
		fh, err := os.Open(config)
		if err != nil {
			return c, err
		}
		defer fh.Close()
		var warnings []string
		c, warnings, err = policies.Load(fh, config)
		if err != nil {
			return c, err
		}
		for _, w := range warnings {
			fmt.Fprintln(e.stderr, "warning:", w)
		}
	} else {
		var err error
		if c, err = policies.Preset(args[0]); err != nil {
			return c, usagef("%v", err)
		}
	}
	return c, applySets(&c, sets)
}

func writePresets(e *env, f report.Format) error {
	base := policies.Default()
	type row struct {
		Name        string             `json:"name"`
		Description string             `json:"description"`
		Changes     []policies.Setting `json:"changes"`
	}
	var rows []row
	t := report.Table{Title: "Preset policies (changes from hermes-agent's defaults)", Columns: []string{"preset", "changes", "description"}}
	for _, c := range policies.Presets() {
		d := c.Diff(&base)
		rows = append(rows, row{c.Name, c.Description, append([]policies.Setting{}, d...)})
		parts := make([]string, len(d))
		for i, s := range d {
			parts[i] = s.Key + "=" + s.Value
		}
		changes := strings.Join(parts, " ")
		if changes == "" {
			changes = "-"
		}
		t.AddRow(c.Name, changes, c.Description)
	}
	if f == report.JSON {
		return writeJSON(e.stdout, rows)
	}
	t.Notes = []string{
		`"ctxsim policies NAME" prints every setting of one preset.`,
		`Also: "recorded" replays what a recorded log shows (run, compare, whatif); whatif adds variants of it (ctxsim whatif --help).`,
	}
	return t.Write(e.stdout, f)
}

func writePolicy(e *env, f report.Format, c *policies.Config) error {
	if f == report.JSON {
		return writeJSON(e.stdout, struct {
			Name     string             `json:"name"`
			Settings []policies.Setting `json:"settings"`
		}{c.Name, c.Settings()})
	}
	t := report.Table{Title: "Policy " + c.Name, Columns: []string{"key", "value"}}
	for _, s := range c.Settings() {
		t.AddRow(s.Key, s.Value)
	}
	if c.Description != "" {
		t.Notes = []string{c.Description}
	}
	return t.Write(e.stdout, f)
}

func writeKeys(e *env, f report.Format) error {
	type row struct {
		Key     string `json:"key"`
		Allowed string `json:"allowed"`
		Default string `json:"default"`
		Help    string `json:"help"`
	}
	base := policies.Default()
	var rows []row
	t := report.Table{Title: "Policy keys", Columns: []string{"key", "default", "allowed", "meaning"}}
	for _, k := range policies.Keys() {
		d, _ := base.Get(k.Name)
		rows = append(rows, row{k.Name, k.Allowed, d, k.Help})
		t.AddRow(k.Name, d, k.Allowed, k.Help)
	}
	t.AddRow("compression.model_thresholds.<model>", "-", "a number in (0, 1]", "per-model threshold; longest matching substring wins")
	rows = append(rows, row{"compression.model_thresholds.<model>", "a number in (0, 1]", "", "per-model threshold; longest matching substring wins"})
	if f == report.JSON {
		return writeJSON(e.stdout, rows)
	}
	return t.Write(e.stdout, f)
}

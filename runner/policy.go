package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
)

// An InputError is input a run cannot take: a policy name, an override,
// a grid, a setting out of range, a sweep directory. Its message names
// each input in braces, in the runner's words ({policy}, {override},
// {grid}, {summarizer fail rate}), as every package below the CLI names
// its inputs (package internal/input): a caller with names of its own for
// them (the CLI's flags) renders it with Name.
type InputError = input.Error

// badInput is an InputError the input alone is at fault for.
func badInput(format string, args ...any) error { return input.Usagef(format, args...) }

// IsPolicyFile reports whether a policy name is a policy file.
func IsPolicyFile(n string) bool {
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json")
}

// ApplySets applies KEY=VALUE overrides to c, in order.
func ApplySets(c *policies.Config, sets []string) error {
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return badInput("{override} %q: want KEY=VALUE", kv)
		}
		if err := c.Set(k, v); err != nil {
			return badInput("{override} %s: %v", kv, err)
		}
	}
	return nil
}

// ResolvePolicies are the policies of names (presets, "recorded",
// "recorded-observed", "as-sent" or .yaml/.json policy files), each with the sets
// applied; a file's ignored keys are its policy's Warnings.
func ResolvePolicies(names []string, sets []string) ([]Policy, error) {
	var out []Policy
	for _, n := range names {
		if n == sim.RecordedName || n == sim.RecordedObservedName || n == assent.Name {
			if len(sets) > 0 {
				return nil, badInput("{override} does not apply to the %s policy", n)
			}
			out = append(out, Policy{Name: n})
			continue
		}
		var cfg policies.Config
		var warnings []string
		if IsPolicyFile(n) {
			c, w, err := readPolicyFile(n, "policy")
			if err != nil {
				return nil, err
			}
			cfg, warnings = c, w
			if cfg.Name == "" {
				cfg.Name = strings.TrimSuffix(filepath.Base(n), filepath.Ext(n))
			}
		} else {
			c, err := policies.Preset(n)
			if err != nil {
				return nil, badInput("{policy} %q: not a preset, %q, %q, %q or a .yaml/.json policy file (presets: %s)", n, sim.RecordedName, sim.RecordedObservedName, assent.Name, strings.Join(policies.PresetNames(), ", "))
			}
			cfg = c
		}
		if err := ApplySets(&cfg, sets); err != nil {
			return nil, err
		}
		c := cfg
		out = append(out, Policy{Name: cfg.Name, Config: &c, Warnings: warnings})
	}
	return out, nil
}

// PolicyConfig is the policy ctxsim policies shows: the preset name, or the
// policy file (YAML or JSON, hermes config.yaml keys) when file is set,
// with sets applied. warnings name the file's keys the simulator ignores;
// they come with any error. An unknown preset is an *InputError.
func PolicyConfig(name, file string, sets []string) (c policies.Config, warnings []string, err error) {
	if file != "" {
		c, warnings, err = readPolicyFile(file, "")
	} else if c, err = policies.Preset(name); err != nil {
		err = &InputError{Msg: err.Error(), Usage: true}
	}
	if err != nil {
		return c, warnings, err
	}
	return c, warnings, ApplySets(&c, sets)
}

// readPolicyFile reads the policy file at path (policies.Load); input,
// when set, names the input that gave it in an error opening it.
func readPolicyFile(path, input string) (policies.Config, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		if input != "" {
			err = &InputError{Msg: fmt.Sprintf("{%s} %s: %v", input, path, err)}
		}
		return policies.Config{}, nil, err
	}
	defer f.Close()
	return policies.Load(f, path)
}

// DefaultPolicies are compare's default policies: every preset, and the
// recorded policy unless sets override settings (it has none).
func DefaultPolicies(sets []string) ([]Policy, error) {
	names := append(policies.PresetNames(), sim.RecordedName)
	if len(sets) > 0 {
		names = names[:len(names)-1]
	}
	return ResolvePolicies(names, sets)
}

// ComparePolicies are compare's policies: names as ResolvePolicies takes
// them, or when there are none the defaults (DefaultPolicies).
func ComparePolicies(names, sets []string) ([]Policy, error) {
	if len(names) == 0 {
		return DefaultPolicies(sets)
	}
	return ResolvePolicies(names, sets)
}

// VariantNames are the what-if variants' names, in order.
func VariantNames() []string {
	var out []string
	for _, v := range variants {
		out = append(out, v.Name)
	}
	return out
}

// WhatifPolicies resolves whatif's policies: what-if variants by name, else
// presets and policy files as ResolvePolicies takes them; no names is
// every variant (VariantNames).
func WhatifPolicies(names []string, sets []string) ([]Policy, error) {
	if len(names) == 0 {
		names = VariantNames()
	}
	var out []Policy
	for _, n := range names {
		if v, ok := LookupVariant(n); ok {
			sp := v.Policy()
			if err := ApplySets(sp.Config, sets); err != nil {
				return nil, err
			}
			out = append(out, sp)
			continue
		}
		if _, err := policies.Preset(n); err != nil && n != sim.RecordedName && n != assent.Name && !IsPolicyFile(n) {
			return nil, badInput("{policy list} %q: not a whatif variant (%s), %q, a preset or a policy file", n, strings.Join(VariantNames(), ", "), assent.Name)
		}
		sp, err := ResolvePolicies([]string{n}, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, sp...)
	}
	return out, nil
}

// A Policy is a policy to replay: a config (a preset, a file, a grid
// point), the recorded or as-sent policy (Config nil), or a variant of
// the recorded policy. A policy named on the command line becomes a policies.Config
// (ResolvePolicies), a Policy here, and a *sim.Policy when Plan builds its
// cells: each form is its layer's.
type Policy struct {
	Name   string
	Config *policies.Config // nil for the recorded policy
	// OnRecorded makes the policy a variant of the recorded one: Config's
	// TTL and compaction rungs on top of what the log shows (whatif).
	OnRecorded bool
	// TTL overrides the recorded tier of an OnRecorded variant.
	TTL string
	// Warnings name the keys of the policy's file the simulator ignores
	// ("file:line: ignored ..."; policies.Load), for the caller to show.
	Warnings []string
}

// Recorded is the recorded policy: the log's own behaviour.
func Recorded() Policy { return Policy{Name: sim.RecordedName} }

// RecordedObserved is the recorded policy that honours the
// re-sends the log shows (sim.NewRecordedObserved): what-if's baseline.
func RecordedObserved() Policy { return Policy{Name: sim.RecordedObservedName} }

// AsSentPolicy is the as-sent policy: each captured request replayed with its
// own markers, TTLs and settings (package sim/assent), on captures only.
func AsSentPolicy() Policy { return Policy{Name: assent.Name} }

// Preset is a preset policy by name.
func Preset(name string) (Policy, error) {
	c, err := policies.Preset(name)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Name: c.Name, Config: &c}, nil
}

// needsRecorded reports whether the policy replays only sessions with
// recorded usage.
func (p Policy) needsRecorded() bool { return p.Config == nil || p.OnRecorded }

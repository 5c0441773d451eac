package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/sim"
)

// A SpecError is a policy name or setting that does not resolve: the
// input is at fault, not the run (the CLI exits 2).
type SpecError struct{ Msg string }

func (e *SpecError) Error() string { return e.Msg }

func specErrorf(format string, args ...any) error {
	return &SpecError{Msg: fmt.Sprintf(format, args...)}
}

// IsPolicyFile reports whether a policy name is a policy file.
func IsPolicyFile(n string) bool {
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json")
}

// ApplySets applies KEY=VALUE overrides to c, in order.
func ApplySets(c *policies.Config, sets []string) error {
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return specErrorf("--set %q: want KEY=VALUE", kv)
		}
		if err := c.Set(k, v); err != nil {
			return specErrorf("--set %s: %v", kv, err)
		}
	}
	return nil
}

// ResolvePolicies are the specs of names (presets, "recorded",
// "recorded-observed" or .yaml/.json policy files), each with the sets
// applied; a file's ignored keys are its spec's Warnings.
func ResolvePolicies(names []string, sets []string) ([]Spec, error) {
	var out []Spec
	for _, n := range names {
		if n == sim.RecordedName || n == sim.RecordedObservedName {
			if len(sets) > 0 {
				return nil, specErrorf("--set does not apply to the recorded policy")
			}
			out = append(out, Spec{Name: n})
			continue
		}
		var cfg policies.Config
		var warnings []string
		if IsPolicyFile(n) {
			c, w, err := readPolicyFile(n, "--policy")
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
				return nil, specErrorf("--policy %q: not a preset, %q, %q or a .yaml/.json policy file (presets: %s)", n, sim.RecordedName, sim.RecordedObservedName, strings.Join(policies.PresetNames(), ", "))
			}
			cfg = c
		}
		if err := ApplySets(&cfg, sets); err != nil {
			return nil, err
		}
		c := cfg
		out = append(out, Spec{Name: cfg.Name, Config: &c, Warnings: warnings})
	}
	return out, nil
}

// Policy is the policy ctxsim policies shows: the preset name, or the
// policy file (YAML or JSON, hermes config.yaml keys) when file is set,
// with sets applied. warnings name the file's keys the simulator ignores;
// they come with any error. An unknown preset is a *SpecError.
func Policy(name, file string, sets []string) (c policies.Config, warnings []string, err error) {
	if file != "" {
		c, warnings, err = readPolicyFile(file, "")
	} else if c, err = policies.Preset(name); err != nil {
		err = &SpecError{Msg: err.Error()}
	}
	if err != nil {
		return c, warnings, err
	}
	return c, warnings, ApplySets(&c, sets)
}

// readPolicyFile reads the policy file at path (policies.Load); flag, when
// set, names the flag that gave it in an error opening it.
func readPolicyFile(path, flag string) (policies.Config, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		if flag != "" {
			err = fmt.Errorf("%s %s: %w", flag, path, err)
		}
		return policies.Config{}, nil, err
	}
	defer f.Close()
	return policies.Load(f, path)
}

// DefaultSpecs are compare's default policies: every preset, and the
// recorded policy unless sets override settings (it has none).
func DefaultSpecs(sets []string) ([]Spec, error) {
	names := append(policies.PresetNames(), sim.RecordedName)
	if len(sets) > 0 {
		names = names[:len(names)-1]
	}
	return ResolvePolicies(names, sets)
}

// CompareSpecs are compare's policies: names as ResolvePolicies takes
// them, or when there are none the defaults (DefaultSpecs).
func CompareSpecs(names, sets []string) ([]Spec, error) {
	if len(names) == 0 {
		return DefaultSpecs(sets)
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

// WhatifSpecs resolves whatif's policies: what-if variants by name, else
// presets and policy files as ResolvePolicies takes them; no names is
// every variant (VariantNames).
func WhatifSpecs(names []string, sets []string) ([]Spec, error) {
	if len(names) == 0 {
		names = VariantNames()
	}
	var out []Spec
	for _, n := range names {
		if v, ok := LookupVariant(n); ok {
			sp := v.Spec()
			if err := ApplySets(sp.Config, sets); err != nil {
				return nil, err
			}
			out = append(out, sp)
			continue
		}
		if _, err := policies.Preset(n); err != nil && n != sim.RecordedName && !IsPolicyFile(n) {
			return nil, specErrorf("--policies %q: not a whatif variant (%s), a preset or a policy file", n, strings.Join(VariantNames(), ", "))
		}
		sp, err := ResolvePolicies([]string{n}, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, sp...)
	}
	return out, nil
}

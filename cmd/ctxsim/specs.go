package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
)

// loadCard is the embedded rate card, overridden by a LiteLLM file.
func loadCard(prices string) (*pricing.Card, error) {
	card := pricing.Default()
	if prices == "" {
		return card, nil
	}
	fh, err := os.Open(prices)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	defer fh.Close()
	if err := card.LoadLiteLLM(fh, prices); err != nil {
		return nil, err
	}
	return card, nil
}

// isPolicyFile reports whether a --policy name is a policy file.
func isPolicyFile(n string) bool {
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json")
}

// applySets applies --set KEY=VALUE overrides to c, in order.
func applySets(c *policies.Config, sets []string) error {
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--set %q: want KEY=VALUE", kv)
		}
		if err := c.Set(k, v); err != nil {
			return usagef("--set %s: %v", kv, err)
		}
	}
	return nil
}

func resolvePolicies(names []string, sets []string) ([]experiment.Spec, error) {
	var out []experiment.Spec
	for _, n := range names {
		if n == sim.RecordedName || n == sim.RecordedObservedName {
			if len(sets) > 0 {
				return nil, usagef("--set does not apply to the recorded policy")
			}
			out = append(out, experiment.Spec{Name: n})
			continue
		}
		var cfg policies.Config
		if isPolicyFile(n) {
			f, err := os.Open(n)
			if err != nil {
				return nil, fmt.Errorf("--policy %s: %w", n, err)
			}
			c, _, err := policies.Load(f, n)
			f.Close()
			if err != nil {
				return nil, err
			}
			cfg = c
			if cfg.Name == "" {
				cfg.Name = strings.TrimSuffix(filepath.Base(n), filepath.Ext(n))
			}
		} else {
			c, err := policies.Preset(n)
			if err != nil {
				return nil, usagef("--policy %q: not a preset, %q, %q or a .yaml/.json policy file (presets: %s)", n, sim.RecordedName, sim.RecordedObservedName, strings.Join(policies.PresetNames(), ", "))
			}
			cfg = c
		}
		if err := applySets(&cfg, sets); err != nil {
			return nil, err
		}
		c := cfg
		out = append(out, experiment.Spec{Name: cfg.Name, Config: &c})
	}
	return out, nil
}

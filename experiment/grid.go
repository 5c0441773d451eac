package experiment

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
)

// ParseGrid reads axes written key=v1,v2,... and checks them against base:
// the key exists, Config.Set accepts every value, no two values give the
// same setting, and no key is swept twice.
func ParseGrid(specs []string, base policies.Config) ([]report.Axis, error) {
	var axes []report.Axis
	seen := map[string]bool{}
	for _, g := range specs {
		key, list, ok := strings.Cut(g, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("grid %q: want key=v1,v2,...", g)
		}
		if seen[key] {
			return nil, fmt.Errorf("grid %s: key given twice", key)
		}
		seen[key] = true
		ax := report.Axis{Key: key}
		effective := map[string]string{}
		for _, v := range strings.Split(list, ",") {
			v = strings.TrimSpace(v)
			c := base
			if err := c.Set(key, v); err != nil {
				return nil, fmt.Errorf("grid %s: %v", key, err)
			}
			got, ok := c.Get(key)
			if !ok {
				got = v // a per-model threshold: Set has parsed it
			}
			if prev, dup := effective[got]; dup {
				return nil, fmt.Errorf("grid %s: values %q and %q are the same setting", key, prev, v)
			}
			effective[got] = v
			ax.Values = append(ax.Values, v)
		}
		axes = append(axes, ax)
	}
	keys := make([]string, len(axes))
	for i, ax := range axes {
		keys[i] = ax.Key
	}
	for i, s := range ShortNames(keys) {
		axes[i].Short = s
	}
	return axes, nil
}

// ShortNames shortens each key to its last element (a per-model threshold
// to model_thresholds.<model>), unless two keys would share the short name.
func ShortNames(keys []string) []string {
	short := func(k string) string {
		if m, ok := strings.CutPrefix(k, "compression.model_thresholds."); ok {
			return "model_thresholds." + m
		}
		return k[strings.LastIndex(k, ".")+1:]
	}
	count := map[string]int{}
	for _, k := range keys {
		count[short(k)]++
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		if s := short(k); count[s] == 1 {
			out[i] = s
		}
	}
	return out
}

// GridPoints is the cross product of axes applied to base, the last axis
// varying fastest, each named base[k1=v1,k2=v2]. base is not changed.
func GridPoints(base policies.Config, axes []report.Axis) ([]Spec, error) {
	idx := make([]int, len(axes))
	var out []Spec
	for {
		c := base
		parts := make([]string, len(axes))
		for i, ax := range axes {
			if err := c.Set(ax.Key, ax.Values[idx[i]]); err != nil {
				return nil, fmt.Errorf("grid %s: %v", ax.Key, err)
			}
			parts[i] = ax.Short + "=" + ax.Values[idx[i]]
		}
		c.Name = base.Name + "[" + strings.Join(parts, ",") + "]"
		out = append(out, Spec{Name: c.Name, Config: &c})
		i := len(axes) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(axes[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

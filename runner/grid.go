package runner

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
)

// A Grid is a sweep: a base policy, the axes swept over it, and their
// cross product (GridPoints), the sweep's cells' policies.
type Grid struct {
	Base   policies.Config
	Axes   []results.Axis
	Points []Policy
	// Warnings are the base policy file's ignored keys (Policy.Warnings).
	Warnings []string
}

// DefaultMaxCells is the most cells (grid points × tenants) a sweep runs
// unless told more: each cell is a replay and a row of summary.json, all
// kept until the sweep is written, so a grid of 1000 × 1000 values grew
// past 4 GB in seconds, with no warning, before the first replay.
const DefaultMaxCells = 10_000

// NewGrid resolves a sweep of policy (a preset or a policy file, with sets
// applied: ResolvePolicies) over grid, axes written key=v1,v2,...
// (ParseGrid). The recorded policies have no settings to sweep, and a key
// also fixed by sets is refused: the grid would silently override it. A
// grid of more than maxCells points (0: DefaultMaxCells) is refused before
// any point is made. Errors are *InputError.
func NewGrid(policy string, sets, grid []string, maxCells int) (*Grid, error) {
	if policy == sim.RecordedName || policy == sim.RecordedObservedName {
		return nil, badInput("{policy} %s: the recorded policy has no settings to sweep", policy)
	}
	specs, err := ResolvePolicies([]string{policy}, sets)
	if err != nil {
		return nil, err
	}
	g := &Grid{Base: *specs[0].Config, Warnings: specs[0].Warnings}
	if len(grid) == 0 {
		return nil, badInput("{grid}: want at least one key=v1,v2,...")
	}
	fixed := map[string]bool{}
	for _, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		fixed[k] = true
	}
	for _, a := range grid {
		if k, _, _ := strings.Cut(a, "="); fixed[strings.TrimSpace(k)] {
			return nil, badInput("{grid} %s: key is also fixed by {override}", strings.TrimSpace(k))
		}
	}
	if g.Axes, err = ParseGrid(grid, g.Base); err != nil {
		return nil, gridError(err)
	}
	if err := CheckCells(g.Axes, 1, maxCells); err != nil {
		return nil, err
	}
	if g.Points, err = GridPoints(g.Base, g.Axes); err != nil {
		return nil, gridError(err)
	}
	return g, nil
}

// CheckCells refuses a sweep of axes over tenants tenants of more than
// maxCells cells (0: DefaultMaxCells), counted without overflow.
func CheckCells(axes []results.Axis, tenants, maxCells int) error {
	if maxCells <= 0 {
		maxCells = DefaultMaxCells
	}
	n, sizes := max(tenants, 1), make([]string, len(axes))
	for i, ax := range axes {
		sizes[i] = fmt.Sprint(len(ax.Values))
		if n > maxCells/max(len(ax.Values), 1) {
			n = maxCells + 1
		} else {
			n *= len(ax.Values)
		}
	}
	if n <= maxCells {
		return nil
	}
	of := strings.Join(sizes, " × ") + " grid points"
	if tenants > 1 {
		of += fmt.Sprintf(" × %d tenants", tenants)
	}
	return badInput("{grid}: %s is over %d cells, the most a sweep runs unless {max cells} allows more (each cell is a replay and a row kept in memory)", of, maxCells)
}

// gridError is ParseGrid's or GridPoints' error ("grid ...") as an
// *InputError naming the grid.
func gridError(err error) error {
	return badInput("{grid}%s", strings.TrimPrefix(input.Braced(err), "grid"))
}

// Render is what a sweep of g prints and a shard's manifest keeps:
// its base policy's name, its axes and its points' names.
func (g *Grid) Render() results.SweepGrid {
	return results.SweepGrid{Base: g.Base.Name, Axes: g.Axes, Points: PolicyNames(g.Points)}
}

// ParseGrid reads axes written key=v1,v2,... and checks them against base:
// the key exists, Config.Set accepts every value, no two values give the
// same setting, and no key is swept twice.
func ParseGrid(specs []string, base policies.Config) ([]results.Axis, error) {
	var axes []results.Axis
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
		ax := results.Axis{Key: key}
		effective := map[string]string{}
		for _, v := range strings.Split(list, ",") {
			v = strings.TrimSpace(v)
			c := base
			if err := c.Set(key, v); err != nil {
				return nil, fmt.Errorf("grid %s: %w", key, err)
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
func GridPoints(base policies.Config, axes []results.Axis) ([]Policy, error) {
	idx := make([]int, len(axes))
	var out []Policy
	for {
		c := base
		parts := make([]string, len(axes))
		for i, ax := range axes {
			if err := c.Set(ax.Key, ax.Values[idx[i]]); err != nil {
				return nil, fmt.Errorf("grid %s: %w", ax.Key, err)
			}
			parts[i] = ax.Short + "=" + ax.Values[idx[i]]
		}
		c.Name = base.Name + "[" + strings.Join(parts, ",") + "]"
		out = append(out, Policy{Name: c.Name, Config: &c})
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

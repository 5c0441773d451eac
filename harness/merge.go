package harness

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
)

// CompareRender, WhatifRender and FidelityRender are what a sharded run
// keeps in its manifest (shard.Manifest.Render) for Join to print its
// table as the unsharded command does; a sweep keeps its report.SweepGrid.
type CompareRender struct {
	Policies []string `json:"policies"`
	Suite    bool     `json:"suite"`
	Detail   bool     `json:"detail"`
}

type WhatifRender struct {
	Policies []string `json:"policies"`
}

type FidelityRender struct {
	Worst int `json:"worst"`
}

// A Joined run is the shards of one compare, whatif, sweep or fidelity
// run put back together: what one process would have produced.
type Joined struct {
	Command string
	// Outputs are compare's and whatif's output set, runs in the
	// command's order; a sweep's runs, labels and warnings.
	Outputs *experiment.Outputs
	// Render is the command's render, decoded: CompareRender,
	// WhatifRender, report.SweepGrid or FidelityRender.
	Render any
	// Fidelity is fidelity's report.
	Fidelity report.FidelityReport
}

// ErrNotJoinable is Join's error for a command whose shards it cannot
// join (cost has its own: shard.MergeCost).
var ErrNotJoinable = errors.New("cannot be merged")

// Join puts m's shards back together; name is the manifest's, for errors.
func Join(m *shard.Merged, name string) (*Joined, error) {
	man := m.Manifest
	j := &Joined{Command: man.Command}
	decode := func(v any) error {
		if err := json.Unmarshal(man.Render, v); err != nil {
			return fmt.Errorf("%s: render: %v", name, err)
		}
		return nil
	}
	if man.Command == "fidelity" {
		var r FidelityRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if len(m.Cells) == 0 {
			return nil, fmt.Errorf("no session in the shards carries recorded usage")
		}
		// Cells are spec-major: the recorded replay's, then the observed.
		var rec, obs []report.RunSummary
		for _, c := range m.Cells {
			if c.Order[0] == 0 {
				rec = append(rec, c.Runs...)
			} else {
				obs = append(obs, c.Runs...)
			}
		}
		j.Fidelity = report.NewFidelityReport(rec, obs)
		return j, nil
	}
	labels, wl, price, err := shard.Labels(m.Cells)
	if err != nil {
		return nil, err
	}
	// The shards read the same inputs: the first one's warnings are the
	// run's. A run with none lists none ([] in whatif's JSON, as one
	// process writes it).
	warnings := man.Warnings
	if warnings == nil {
		warnings = []traces.Warning{}
	}
	switch man.Command {
	case "compare":
		var r CompareRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if j.Outputs, err = m.Outputs("ctxsim compare", labels, wl, price, warnings); err != nil {
			return nil, err
		}
		report.SortRuns(j.Outputs.Runs, r.Policies)
	case "whatif":
		var r WhatifRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if j.Outputs, err = m.Outputs("ctxsim whatif", labels, nil, price, warnings); err != nil {
			return nil, err
		}
	case "sweep":
		var r report.SweepGrid
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		j.Outputs = &experiment.Outputs{Runs: m.Runs(), Labels: labels, Warnings: warnings}
		r.Sort(j.Outputs.Runs) // cell order, as the unsharded sweep's
	default:
		return nil, fmt.Errorf("%s: command %q %w", name, man.Command, ErrNotJoinable)
	}
	return j, nil
}

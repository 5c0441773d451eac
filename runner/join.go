package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/usage"
)

// CompareRender, WhatifRender and FidelityRender are what a sharded run
// keeps in its manifest (shard.Manifest.Render) for Join to print its
// table as the unsharded command does; a sweep keeps its results.SweepGrid.
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

// A Joined run is the shards of one compare, whatif, sweep, tune or fidelity
// run put back together: what one process would have produced.
type Joined struct {
	Command string
	// Outputs are compare's and whatif's output set, runs in the
	// command's order; a sweep's runs, labels and warnings.
	Outputs *Outputs
	// Render is the command's render, decoded: CompareRender,
	// WhatifRender, results.SweepGrid or FidelityRender.
	Render any
	// Fidelity is fidelity's report.
	Fidelity results.FidelityReport
	// Tune is tune's result, chosen on the merged runs.
	Tune *TuneResult
	// Cost is cost's report (Render is its usage.Grouping), grouped by
	// CostOptions; CostWarnings are the shards' warnings, listed in it.
	Cost         *usage.Cost
	CostOptions  usage.Options
	CostWarnings *traces.Warnings
}

// ErrNotJoinable is Join's error for a command whose shards it cannot
// join.
var ErrNotJoinable = errors.New("cannot be merged")

// Join puts m's shards back together; name is the manifest's, for errors,
// and prices the price file a cost run's shards priced with ("" for the
// embedded card; the other commands' shards carry their prices).
// The entries' runs and records decode to what the unsharded run held (a
// record survives the trip through JSON unchanged: TestRecordJSONRoundTrip),
// so what is built from them (report.html, records.parquet) is what the
// unsharded run built.
func Join(m *shard.Merged, name, prices string) (*Joined, error) {
	man := m.Manifest
	if man.Command == "cost" {
		return joinCost(m, prices)
	}
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
		if len(m.Entries) == 0 {
			return nil, fmt.Errorf("no session in the shards carries recorded usage")
		}
		// Cells are policy-major: the recorded replay's, then the
		// observed, then the as-sent replay's calls of each capture file.
		var rec, obs []results.RunSummary
		var calls []assent.Call
		for _, e := range m.Entries {
			if e.Order[0] == 2 {
				var cs []assent.Call
				if err := json.Unmarshal(e.Data, &cs); err != nil {
					return nil, fmt.Errorf("%s: cell %s: as-sent calls: %v", name, e.Unit, err)
				}
				calls = append(calls, cs...)
				continue
			}
			runs, err := entryRuns(e)
			if err != nil {
				return nil, err
			}
			if e.Order[0] == 0 {
				rec = append(rec, runs...)
			} else {
				obs = append(obs, runs...)
			}
		}
		j.Fidelity = results.NewFidelityReport(rec, obs)
		j.Fidelity.AsSent = AsSentGroups(calls)
		j.Fidelity.Warnings = man.Warnings // the shards read the same inputs
		return j, nil
	}
	labels, wl, price, err := entryLabels(m.Entries)
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
	runs, err := mergedRuns(m)
	if err != nil {
		return nil, err
	}
	switch man.Command {
	case "compare":
		var r CompareRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if j.Outputs, err = mergedOutputs(m, runs, "ctxsim compare", labels, wl, price, warnings); err != nil {
			return nil, err
		}
		results.SortRuns(j.Outputs.Runs, r.Policies)
	case "whatif":
		var r WhatifRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if j.Outputs, err = mergedOutputs(m, runs, "ctxsim whatif", labels, nil, price, warnings); err != nil {
			return nil, err
		}
	case "sweep":
		var r results.SweepGrid
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		j.Outputs = &Outputs{Runs: runs, Labels: labels, Warnings: warnings}
		r.Sort(j.Outputs.Runs) // cell order, as the unsharded sweep's
	case "tune":
		var r TuneRender
		if err := decode(&r); err != nil {
			return nil, err
		}
		j.Render = r
		if j.Tune, err = r.Result(runs, warnings); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: command %q %w", name, man.Command, ErrNotJoinable)
	}
	return j, nil
}

// entryRuns decodes an entry's runs.
func entryRuns(e shard.Entry) ([]results.RunSummary, error) {
	if len(e.Runs) == 0 {
		return nil, nil
	}
	var runs []results.RunSummary
	if err := json.Unmarshal(e.Runs, &runs); err != nil {
		return nil, fmt.Errorf("cell %s: runs: %v", e.Unit, err)
	}
	for i := range runs {
		if err := results.CheckRun(&runs[i]); err != nil {
			return nil, fmt.Errorf("cell %s: runs[%d]: %v", e.Unit, i, err)
		}
	}
	return runs, nil
}

// mergedRuns are every entry's runs, in cell order: the order the
// unsharded run produced them in, before the command sorts them for
// output.
func mergedRuns(m *shard.Merged) ([]results.RunSummary, error) {
	var out []results.RunSummary
	for _, e := range m.Entries {
		runs, err := entryRuns(e)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	return out, nil
}

// mergedOutputs are a merged run's outputs: its runs in cell order, its
// records decoded, the cells' labels, and the warnings of the first
// shard's manifest.
func mergedOutputs(m *shard.Merged, runs []results.RunSummary, title string, labels map[string]Label, workloads map[string]string, price *pricing.Price, warnings []traces.Warning) (*Outputs, error) {
	var recs []sim.Record
	n := 0
	err := m.EachRecord(func(line []byte) error {
		n++
		var r sim.Record
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("merged records.jsonl line %d: %v", n, err)
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Outputs{Title: title, Seed: m.Manifest.Seed, Runs: runs, Records: recs, Labels: labels, Workloads: workloads, Price: price, Warnings: warnings}, nil
}

// Print prints compare's table of res in f: with Suite and not Detail the
// workload table (policies × workloads), else one row per run; JSON is
// always the runs.
func (r CompareRender) Print(w io.Writer, f report.Format, res *Outputs) error {
	if r.Suite && !r.Detail && f != report.JSON {
		return report.WorkloadTable(res.Runs, res.Workloads, r.Policies).Write(w, f)
	}
	return report.WriteRuns(w, f, res.Runs, report.RunsOptions{Warnings: res.Warnings})
}

// Print prints whatif's report of res's runs (in cell order, the
// recorded replay's first) in f; its JSON carries res's warnings.
func (r WhatifRender) Print(w io.Writer, f report.Format, res *Outputs) error {
	rep := results.NewWhatif(res.Runs, r.Policies)
	if f == report.JSON {
		rep.Warnings = res.Warnings
		return report.WriteJSON(w, rep)
	}
	return report.WhatifTable(rep).Write(w, f)
}

// Print prints the fidelity report in f: the worst sessions, the groups
// (by log format, version and model) when there are several, then the
// summary.
func (r FidelityRender) Print(w io.Writer, f report.Format, rep results.FidelityReport) error {
	if f == report.JSON {
		return report.WriteJSON(w, rep)
	}
	if err := report.FidelityWorstTable(rep, r.Worst).Write(w, f); err != nil {
		return err
	}
	if t := report.FidelityGroupsTable(rep); t != nil {
		if err := t.Write(w, f); err != nil {
			return err
		}
	}
	return report.FidelitySummaryTable(rep).Write(w, f)
}

// Write writes the joined run's files to dir as the unsharded command
// writes them: compare's and whatif's output set, a sweep's summary and
// runs (WriteSweep); fidelity and cost write none.
func (j *Joined) Write(dir string) error {
	switch r := j.Render.(type) {
	case CompareRender, WhatifRender:
		return j.Outputs.Write(dir, "")
	case results.SweepGrid:
		return WriteSweep(dir, "", r, j.Outputs.Runs, j.Outputs.Labels, j.Outputs.Warnings)
	case TuneRender:
		return j.Tune.Write(dir, "")
	}
	return nil
}

// Print prints the joined run's table in f, byte for byte as the
// unsharded command prints it.
func (j *Joined) Print(w io.Writer, f report.Format) error {
	switch r := j.Render.(type) {
	case CompareRender:
		return r.Print(w, f, j.Outputs)
	case WhatifRender:
		return r.Print(w, f, j.Outputs)
	case FidelityRender:
		return r.Print(w, f, j.Fidelity)
	case results.SweepGrid:
		return report.WriteSweep(w, f, r, j.Outputs.Runs, j.Outputs.Warnings)
	case TuneRender:
		return j.Tune.Print(w, f)
	case usage.Grouping:
		return report.WriteCost(w, f, j.Cost, j.CostOptions.Loc)
	}
	return nil
}

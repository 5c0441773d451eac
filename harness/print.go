package harness

import (
	"io"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
)

// Print prints compare's table of res in f: with Suite and not Detail the
// workload table (policies × workloads), else one row per run; JSON is
// always the runs.
func (r CompareRender) Print(w io.Writer, f report.Format, res *experiment.Outputs) error {
	if r.Suite && !r.Detail && f != report.JSON {
		return report.WorkloadTable(res.Runs, res.Workloads, r.Policies).Write(w, f)
	}
	return report.WriteRuns(w, f, res.Runs, report.RunsOptions{Warnings: res.Warnings})
}

// Print prints whatif's report of res's runs (in cell order, the
// recorded replay's first) in f; its JSON carries res's warnings.
func (r WhatifRender) Print(w io.Writer, f report.Format, res *experiment.Outputs) error {
	rep := report.NewWhatif(res.Runs, r.Policies)
	if f == report.JSON {
		rep.Warnings = res.Warnings
		return report.WriteJSON(w, rep)
	}
	return rep.Table().Write(w, f)
}

// Print prints the fidelity report in f: the Worst sessions, then the
// summary.
func (r FidelityRender) Print(w io.Writer, f report.Format, rep report.FidelityReport) error {
	if f == report.JSON {
		return report.WriteJSON(w, rep)
	}
	if err := rep.WorstTable(r.Worst).Write(w, f); err != nil {
		return err
	}
	return rep.SummaryTable().Write(w, f)
}

// Write writes the joined run's files to dir as the unsharded command
// writes them: compare's and whatif's output set, a sweep's summary and
// runs (WriteSweep); fidelity writes none.
func (j *Joined) Write(dir string) error {
	switch r := j.Render.(type) {
	case CompareRender, WhatifRender:
		return j.Outputs.Write(dir, "")
	case report.SweepGrid:
		return WriteSweep(dir, "", r, j.Outputs.Runs, j.Outputs.Labels, j.Outputs.Warnings)
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
	case report.SweepGrid:
		return r.Write(w, f, j.Outputs.Runs, j.Outputs.Warnings)
	}
	return nil
}

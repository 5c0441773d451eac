package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/report/columnar"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// A Label is a run's tenant and workload, for runs.parquet.
type Label struct{ Tenant, Workload string }

// Labels names the tenant and workload of every root session of cells.
func Labels(cells []*Cell) map[string]Label {
	out := map[string]Label{}
	for _, c := range cells {
		for _, r := range c.Tenant.Roots {
			out[r.ID] = Label{c.Tenant.Key, WorkloadOf(r)}
		}
	}
	return out
}

// Outputs are what a replay command writes, from its own replays or
// merged from shards: the same bytes either way.
type Outputs struct {
	Title   string
	Seed    uint64
	Runs    []results.RunSummary
	Records []sim.Record
	Labels  map[string]Label
	// Workloads names each trace's workload in report.html (nil: the
	// trace's own name).
	Workloads map[string]string
	// Price is the first call's, for report.html's break-even figures.
	Price *pricing.Price
	// Warnings are the input's, for summary.json.
	Warnings []traces.Warning
}

// Write writes records.jsonl, summary.json, report.html, runs.parquet and
// records.parquet to dir as one set (report.WriteDir), when dir is set,
// and the figures to plots, when set.
func (o *Outputs) Write(dir, plots string) error {
	if dir != "" {
		in := report.HTMLInput{Title: o.Title, Subtitle: fmt.Sprintf("seed %d", o.Seed), Runs: o.Runs, Records: o.Records,
			Price: o.Price, Workloads: o.Workloads, Warnings: o.Warnings}
		if err := report.WriteDir(dir, in, parquetFiles(o.Runs, o.Labels, o.Records, true)...); err != nil {
			return err
		}
	}
	if plots != "" {
		if err := os.MkdirAll(plots, 0o755); err != nil {
			return err
		}
		return report.WriteFigures(plots, report.RunFigures(o.Records))
	}
	return nil
}

// WriteRunsParquet writes runs.parquet to dir; docs/parquet.md is the
// schema.
func WriteRunsParquet(dir string, runs []results.RunSummary, labels map[string]Label) error {
	for _, f := range parquetFiles(runs, labels, nil, false) {
		if err := atomicfile.WriteFunc(filepath.Join(dir, f.Name), f.Write); err != nil {
			return err
		}
	}
	return nil
}

// parquetFiles are runs.parquet (and records.parquet when withRecords), as
// files of an output set.
func parquetFiles(runs []results.RunSummary, labels map[string]Label, recs []sim.Record, withRecords bool) []report.SetFile {
	files := []report.SetFile{{Name: "runs.parquet", Write: func(w io.Writer) error {
		rows := make([]columnar.Run, len(runs))
		for i, r := range runs {
			l := labels[r.Trace]
			rows[i] = columnar.RunOf(r, l.Tenant, l.Workload)
		}
		return columnar.WriteRuns(w, rows)
	}}}
	if withRecords {
		files = append(files, report.SetFile{Name: "records.parquet", Write: func(w io.Writer) error {
			return columnar.WriteRecords(w, recs)
		}})
	}
	return files
}

// FirstPrice is the price of the first call's model, for the report's
// break-even figures; nil when the rate card has none.
func FirstPrice(card *pricing.Card, recs []sim.Record) *pricing.Price {
	for _, r := range recs {
		if r.Kind == sim.KindCall && r.Model != "" {
			p, err := card.Lookup(r.Model)
			if err != nil {
				return nil
			}
			return &p
		}
	}
	return nil
}

// PolicyWarnings are the policies' policy-file warnings (Policy.Warnings), in
// order.
func PolicyWarnings(specs []Policy) []string {
	var out []string
	for _, sp := range specs {
		out = append(out, sp.Warnings...)
	}
	return out
}

// PolicyNames are the policies' names, in order.
func PolicyNames(specs []Policy) []string {
	names := make([]string, len(specs))
	for i, sp := range specs {
		names[i] = sp.Name
	}
	return names
}

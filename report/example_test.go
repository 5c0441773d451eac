package report_test

import (
	"os"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
)

func ExampleTable() {
	t := &report.Table{
		Columns: []string{"policy", "cost $", "hit %"},
		Right:   []bool{false, true, true},
	}
	t.AddRow("system_and_3", "1.2345", "91.0")
	t.AddRow("none", "9.8765", "0.0")
	t.Write(os.Stdout, report.Text)
	// Output:
	// policy        cost $  hit %
	// ------------  ------  -----
	// system_and_3  1.2345   91.0
	// none          9.8765    0.0
}

func ExampleWriteRuns() {
	runs := []results.RunSummary{
		{Trace: "s1", Policy: "claude-code", Requests: 40, CostUSD: 1.5, CacheHitRate: 0.93},
		{Trace: "s1", Policy: "none", Requests: 40, CostUSD: 7.25},
	}
	report.WriteRuns(os.Stdout, report.Markdown, runs, report.RunsOptions{})
	// Output:
	// | trace | policy | requests | cost $ | hit % | occ max % | compactions | p95 ms |
	// |---|---|---:|---:|---:|---:|---:|---:|
	// | s1 | claude-code * | 40 | 1.5000 | 93.0 | 0.0 | 0 | 0 |
	// | s1 | none | 40 | 7.2500 | 0.0 | 0.0 | 0 | 0 |
	//
	// * cheapest policy for the trace (among runs whose every call fit the window)
}

// Package report turns simulation records into what people read: metrics,
// tables (text, Markdown, CSV, JSON), gonum/plot figures, a self-contained
// HTML report, and baseline comparisons for CI. It reads only sim.Record
// values (and prices) and never runs a simulation; every metric is defined
// in docs/metrics.md.
//
// # Typical steps
//
// Summarize each (trace, policy) run and print the compare table:
//
//	res := report.SummarizeAll(recs, report.Options{})
//	report.WriteRuns(os.Stdout, report.Text, res.Runs, report.RunsOptions{})
//
// Keep the machine-readable outputs (summary.json, records.jsonl), each
// written through WriteFileAtomic so a reader never sees half a file:
//
//	report.WriteFileAtomic(filepath.Join(dir, "summary.json"), func(w io.Writer) error {
//		return report.WriteResults(w, res)
//	})
//	report.WriteFileAtomic(filepath.Join(dir, "records.jsonl"), func(w io.Writer) error {
//		return report.WriteRecords(w, recs)
//	})
//
// Figures are data first: RunFigures(recs), BreakevenFigure(price, n),
// GapCostFigure(price, growth, maxGap) and HeatmapFigure(name, title, grid)
// return a Figure whose WriteData dumps the numbers (what tests golden-check)
// and whose Render draws SVG or PNG, 800 px wide. SVG output is
// byte-deterministic.
//
// The HTML report is one file with inline CSS and SVG, no scripts and no
// network: WriteHTML(w, HTMLInput{Runs: res.Runs, Records: recs, Price: &p}).
//
// Comparing runs goes through one aggregation: NewPivot sums runs into
// rows × columns (policies × workloads, a sweep's grid, policies ×
// sessions), and its Best, BestIn and FirstComparable apply the one rule
// for "cheapest": never a total with overflowed or failed calls, whose
// rejected calls went unbilled. WorkloadTable, Matrix (a two-key sweep's
// cost table and heatmaps) and NewWhatif are drawn from it. WriteDir
// writes a comparison's records.jsonl, summary.json and report.html.
//
// The CLI's other outputs render here too, from values other packages
// compute: WriteCost (usage.Cost), a FidelityReport's WorstTable and
// SummaryTable, Schedule and ScheduleTable (a run beside its hindsight
// optimum), a SweepGrid's table and matrix, the policy listings
// (WritePresets, WritePolicy, WritePolicyKeys), the synthetic profiles
// (WriteProfiles), validate's verdicts (WriteFileChecks) and native trace
// sets (WriteNativeSet, WriteWritten). WriteJSON is every command's JSON.
//
// For CI, Check(baseline, current, tolerances) compares every cell metric by
// metric, direction-aware; CheckReport.Failed says whether to fail the job
// and WriteMarkdownSummary writes a job summary.
//
// # Simplifications
//
// Per-turn latency adds the turn's call latencies and stalls: tool run time
// between calls is not in the records, so turns look faster than a user
// would see them (the same for every policy). Cache damage compares writes
// after a compaction with the pre-compaction write rate; see
// docs/metrics.md for how that biases it.
package report

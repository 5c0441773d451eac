// Package report renders what package results measures: tables (text,
// Markdown, CSV, JSON) that fit a terminal, gonum/plot figures, a
// self-contained HTML report, and output sets written whole. It computes
// no metric and runs no simulation; every figure it shows is a results
// value (docs/metrics.md defines them).
//
// # Typical steps
//
// Summarize each (trace, policy) run and print the compare table:
//
//	res := results.SummarizeAll(recs, results.Options{})
//	report.WriteRuns(os.Stdout, report.Text, res.Runs, report.RunsOptions{})
//
// Keep the machine-readable outputs, records.jsonl, summary.json and
// report.html, as one set (WriteDir): all written or none.
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
// Tables are drawn from results: WorkloadTable (policies × workloads,
// through a results.Pivot), Matrix and GridMatrix (a two-key sweep's cost
// table and heatmaps), WhatifTable, FidelityWorstTable and
// FidelitySummaryTable, WriteTune (a tune's answer, folds, settings and
// fronts; TuneFigures and WriteTuneHTML draw its fronts), CheckTable (WriteCheck, and WriteCheckMarkdown for
// a CI job summary), WriteBreakeven, WriteSweep, Schedule and
// ScheduleTable (a run beside its hindsight optimum, WriteRun), WriteCost
// (usage.Cost). The CLI's other outputs render here too: the policy
// listings (WritePresets, WritePolicy, WritePolicyKeys), the synthetic
// profiles (WriteProfiles), validate's verdicts (WriteFileChecks) and
// native trace sets (WriteNativeSet, WriteWritten). WriteJSON is every
// command's JSON; WriteSummary is summary.json (WriteSummaryFile writes it
// whole); WriteBreakevenFigures writes breakeven's figures. On a terminal, tables fit
// TerminalWidth and a run shows a NewProgress bar.
package report

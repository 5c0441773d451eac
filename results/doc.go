// Package results is the result model of ctxsim's runs: what the runner
// collects and every rendering (package report) and gate reads. It
// measures and compares; it draws nothing and writes no file.
//
//   - RunSummary: one (trace, policy) run summarized from its sim.Record
//     values (Summarize, SummarizeAll): cost by token class, hit rates,
//     latency, occupancy, compactions, cache damage, misses by cause,
//     fidelity against the bill, hindsight regret. Summary is the
//     summary.json document (Read parses one, refusing what a gate must
//     not pass on). Every metric is defined in docs/metrics.md.
//   - Pivot sums runs into rows × columns and owns the one rule for
//     "best": the cheapest total none of whose calls overflowed the window
//     or failed, since rejected calls are unbilled and would flatter a
//     policy that loses them. SortRuns, SweepGrid and Axis order and name
//     a sweep's cells.
//   - FidelityReport: the replay's error against the bills of every
//     recorded session, both replays' distributions and each session's
//     cause (NewFidelityReport).
//   - WhatifReport: recorded sessions priced under other policies against
//     the replay of what happened, with the replay's own error and the
//     hindsight regret (NewWhatif).
//   - BreakevenReport and HindsightGap: cache break-even figures, the
//     per-session 5m-vs-1h verdicts and what the cheapest schedule chose at
//     each idle gap.
//   - Tune chooses among a policy's settings out of sample (NewTune):
//     session groups dealt into folds by the seed (Folds), the cheapest
//     setting meeting the constraints (Constraint, TuneMetrics) chosen on
//     each fold's complement and measured on the fold, the recommendation,
//     the in-sample saving beside it, and the Pareto fronts of cost
//     against each constrained metric (docs/tune.md).
//   - Check compares results with a baseline metric by metric,
//     direction-aware, within Tolerances; CheckReport.Failed says whether a
//     CI job should fail.
//
// The fixtures its tests and report's are worked out on are in
// results/resultstest.
//
// # Simplifications
//
// Per-turn latency adds the turn's call latencies and stalls: tool run time
// between calls is not in the records, so turns look faster than a user
// would see them (the same for every policy). Cache damage compares writes
// after a compaction with the pre-compaction write rate; see
// docs/metrics.md for how that biases it.
package results

// Package experiment runs comparisons: sessions replayed under policies
// through package sim, summarized by package report. It is what the
// ctxsim CLI's compare, run, sweep and whatif commands are made of, and
// what a Go program uses to run them itself.
//
// # Typical steps
//
//	st, _ := experiment.NewSetup(nil, "auto", seed)   // rate card, token memo, provider, seed
//	st.Memo.Warm(sessions)                              // tokenize each distinct block once
//	cells, _ := st.Cells(experiment.Tenants(sessions), specs)
//	err := st.Run(ctx, cells, workers, func(c *experiment.Cell) error { ... c.Result.Runs ... })
//
// A Tenant is sessions that share one provider account (a session and its
// subagents, walked to the root; logs loaded from one path). A Spec is a
// policy: a preset (Preset), a config, the recorded behaviour (Recorded),
// a what-if Variant of it, or a grid point (NewGrid: a base policy and its
// axes, checked against the --set overrides; ParseGrid, GridPoints). A Cell
// is one (tenant, spec) replay. Run replays cells on a worker pool and
// hands them to emit in cell order, so output is byte-identical for any
// number of workers; it stops when ctx is cancelled.
//
// A tenant with recorded usage has two anchored replays, each fitted on
// its billed calls: the recorded policy's (and, unless SkipOpenLoop, its
// open-loop twin from a fit on the first 20% of calls), and the
// recorded-observed one, which also honours the re-sends and reads past
// the TTL the log shows. Every other policy's cell is sized by the
// recorded-observed replay's frozen calibration (see sim.Calibrator). Each
// anchor runs once per Setup and tenant, when a cell first needs it, and
// is shared by every cell: a run without the recorded policy (whatif's)
// never runs that one.
//
// Randomness comes from Setup.Seed only: a replay's stream is derived from
// (seed, names of the cell), and the provider's from (seed, tenant), so
// every policy meets the same provider (common random numbers).
//
// Setup.Check refuses settings no replay can honour (a fault rate out of
// range, context editing off Anthropic, a vLLM cache smaller than its
// block); Cells calls it, so a bad setup runs nothing.
//
// The commands' pieces are here too: ResolvePolicies, CompareSpecs (with
// compare's DefaultSpecs) and WhatifSpecs turn names into specs (a
// *SpecError is bad input), Policy a preset or policy file into the config
// ctxsim policies shows, Grid.Render a grid into its table's render; Each runs
// cells past failures (*CellsFailed counts them); Outputs writes a run's
// output set (records.jsonl, summary.json, report.html, runs.parquet,
// records.parquet) and Labels names each run's tenant and workload;
// ClampWarnings flags thresholds hermes would clamp; TierCosts and
// HindsightGaps are breakeven's replays. Sharding a run is package shard's
// (shard.Plan), which builds on these; package harness runs whole
// commands (load, plan, run, collect) on both.
//
// # Aggregation
//
// report.Pivot sums runs into rows × columns and owns the one rule for "best":
// the cheapest total none of whose calls overflowed the window or failed,
// since rejected calls are unbilled and would flatter a policy that loses
// them. The CLI's workload table, sweep matrix and what-if report all use
// it.
//
// # Sweeps
//
// Sweep is Run with a Journal: each finished cell is appended (one write,
// synced) to an io.Writer as soon as it finishes, so an interrupted sweep
// resumes (ReadJournal, CompleteCells, Resume) without running a finished
// cell again. A sweep's Identity hashes every input that changes a result,
// so a resume can refuse another sweep's journal and say what differs.
// OpenJournal keeps one in a directory (sweep.json beside cells.jsonl),
// rewriting a torn tail away before a resume appends. A journal write that
// fails stops the sweep: results that cannot be saved are not computed.
package experiment

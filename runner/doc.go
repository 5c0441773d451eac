// Package runner runs experiments: sessions replayed under policies
// through package sim, summarized by package results. It is the one layer
// between the ctxsim CLI and the engine, and what a Go program uses to run
// the CLI's commands itself. A run is four steps, each one call:
//
//	l, _ := runner.Load(ctx, runner.Workload{Paths: []string{"logs/"}}) // load
//	rn, _ := runner.New(nil, "auto", seed)        // rate card, provider, seed
//	pols, _ := runner.ResolvePolicies([]string{"hermes-default", "hermes-micro"}, nil)
//	plan, _ := rn.Plan(ctx, runner.Tenants(l.Sessions), pols, runner.PlanOptions{}) // plan
//	err := rn.Run(ctx, plan, runner.RunOptions{Workers: 4}, func(c *runner.Cell) { // run
//		runs = append(runs, c.Result.Runs...)                                 // collect
//	})
//
// Settings.Runner makes a Runner from the plain values a command line
// gives; Console are Options that show a run on a terminal (a progress
// bar, each failed cell named).
//
// Load reads a Workload: the embedded suite (EmbeddedSessions), trace
// paths in any format (traces.Open), synthetic profiles. A Tenant is
// sessions that share one provider account (a session and its subagents,
// walked to the root; logs loaded from one path). A Policy is what to
// replay: a preset (Preset), a config, the recorded behaviour (Recorded,
// RecordedObserved), a what-if Variant of it, or a grid point (NewGrid: a
// base policy and its axes, checked against the overrides; ParseGrid,
// GridPoints). A Cell is one (tenant, policy) replay; a Plan is a run's
// cells, policy-major.
//
// A shard is a filter on the plan: PlanOptions.Shard keeps the cells whose
// unit (ByTenant, ByCell) the shard owns (package shard), each with its
// place in the unsharded run, and Run keeps each finished cell as an entry
// of the shard's part (Plan.Entries, for shard.WriteDir; ShardManifest is
// its identity). Nothing else of a run knows it is sharded. Join puts the
// shards of a run back together (shard.Merge) as the unsharded run's
// outputs, a cost run's report too.
//
// Run replays cells on a worker pool and hands them to emit in cell order,
// so output is byte-identical for any number of workers; it stops when ctx
// is cancelled. A cell that fails (a floor larger than the window) does
// not stop the others: Run returns *CellsFailed with their results
// standing, and Stopped tells that apart from a run that stopped.
//
// The commands are the same four steps with each command's rule, and
// return what the command reports: Compare (compare: names each session's
// workload), Whatif (every session one account, against the
// recorded-observed baseline), Fidelity (each session its own account,
// under recorded and recorded-observed), Sweep (journaled, resumable:
// SweepDir), ReplayTrace (run: one trace, one policy, its hindsight tape),
// SuiteResults (what ctxsim check compares with its baseline),
// Breakeven (breakeven's replays), Cost (cost's report of billed calls)
// and Tune (a sweep of a policy's
// candidate settings, NewTunePlan, chosen among by results.NewTune:
// folds of session groups, the choice on training folds, its saving on
// the held-out ones; TuneSpaces are the presets' default search spaces,
// and a TuneResult writes its files and the recommended policy file). Each returns a Replay; Outputs writes a
// run's output set (records.jsonl, summary.json, report.html,
// runs.parquet, records.parquet) and the renders (CompareRender,
// WhatifRender, FidelityRender) print its table, the same bytes whether
// the run was one process or merged from shards.
//
// # Anchored replays
//
// A tenant with recorded usage has two anchored replays, each fitted on
// its billed calls: the recorded policy's (and, unless SkipOpenLoop, its
// open-loop twin from a fit on the first 20% of calls), and the
// recorded-observed one, which also honours the re-sends and reads past
// the TTL the log shows. Every other policy's cell is sized by the
// recorded-observed replay's frozen calibration (see sim.Calibrator). Each
// anchor runs once per Runner and tenant, when a cell first needs it, and
// is shared by every cell: a run without the recorded policy (whatif's)
// never runs that one.
//
// Randomness comes from Runner.Seed only: a replay's stream is derived
// from (seed, names of the cell), and the provider's from (seed, tenant),
// so every policy meets the same provider (common random numbers).
//
// # Bad input
//
// Runner.Check refuses settings no replay can honour (a fault rate out of
// range, context editing off Anthropic, a vLLM cache smaller than its
// block); Plan calls it, so a bad runner runs nothing. Bad policy names,
// overrides and grids are *InputError, whose message names each input in
// the runner's words ({policy}, {override}, {grid}); the CLI names them
// by its flags (InputError.Name). ClampWarnings flags thresholds hermes
// would clamp.
//
// # Sweeps
//
// A sweep is Run with a Journal: each finished cell is appended (one
// write, synced) to an io.Writer as soon as it finishes, so an interrupted
// sweep resumes (ReadJournal, CompleteCells, Resume) without running a
// finished cell again. A sweep's Identity hashes every input that changes
// a result, so a resume can refuse another sweep's journal and say what
// differs. OpenJournal keeps one in a directory (sweep.json beside
// cells.jsonl), rewriting a torn tail away before a resume appends. A
// journal write that fails stops the sweep: results that cannot be saved
// are not computed.
//
// # Caches
//
// OpenCacheDir opens the caches a rebuilt ctxsim must not reuse (imports,
// hindsight optima) under one directory; Runner.OwnTokens backs the token
// counts with the persistent count cache.
package runner

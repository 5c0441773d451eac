// Package harness is ctxsim's replay commands as library calls: Compare,
// Whatif, Fidelity and Sweep each take sessions already loaded, an
// experiment.Setup and the policies, plan the cells (shard-aware, through
// shard.Plan), replay them on a worker pool and collect what the command
// reports, the same figures as the ctxsim CLI prints. A Go program runs
// one as:
//
//	st, _ := experiment.NewSetup(nil, "auto", seed)
//	specs, _ := experiment.ResolvePolicies([]string{"hermes-default", "hermes-micro"}, nil)
//	rp, err := harness.Compare(ctx, st, sessions, specs, harness.Options{Workers: 4})
//	// rp.Runs: one report.RunSummary per (trace, policy), sorted
//
// Options carry the seams the CLI fills: the worker count, the shard and
// the sessions it read by header only, whether to keep records, and hooks
// for a progress bar (Start, Done, End) and for each cell that fails. A run whose cells
// failed returns *experiment.CellsFailed with the others' results; one
// that stopped (Stopped: ctx cancelled, a journal or part that could not
// be written) returns no results.
//
// Load reads a Workload (the embedded suite, trace paths in any format,
// synthetic profiles; a shard reads native traces by header only) and
// drops sessions with no model call; Join puts a sharded run's parts
// (shard.Merge) back together as the unsharded run's outputs, reading the
// render each command keeps in its manifest (CompareRender, WhatifRender,
// FidelityRender, report.SweepGrid). Each render prints its command's
// table (CompareRender.Print, ...), and a Joined run writes and prints
// itself as the unsharded command would (Joined.Write, Joined.Print).
//
// Each command's own rule lives here: Run (ctxsim run, never sharded)
// replays one trace as one account under one policy (recorded when it
// carries recorded usage, else hermes-default) and keeps its hindsight
// tape; Compare names each session's workload; Whatif replays every
// session as one account against the recorded-observed baseline; Fidelity
// replays each session as its own account under the recorded and
// recorded-observed policies and keeps only those with recorded usage;
// Sweep journals each finished cell (in a SweepDir) and skips the cells a
// resumed journal holds, and WriteSweep writes its files; Suite replays
// the embedded suite as ctxsim check compares it with a baseline;
// Breakeven adds ctxsim breakeven's replays (tier costs, hindsight gaps)
// to its report. OpenCaches opens the caches a rebuilt ctxsim must not
// reuse (imports, hindsight optima) for a Setup; Close flushes them.
// Flags, terminal output and exit codes stay in the CLI;
// outputs are written by experiment.Outputs (Replay.Outputs).
package harness

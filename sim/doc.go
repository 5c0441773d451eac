// Package sim is the deterministic engine: a virtual clock, the agent's call
// loop, and one Record per model call and per context-management pass.
//
// # Typical steps
//
//	pol, _ := sim.NewPolicy(cfg, memo)                 // a policies.Config → planner, TTL, compaction
//	prov := provider.NewAnthropic(provider.AnthropicOptions{})
//	res, err := sim.Run(ctx, session, pol, prov, sim.Options{Prices: pricing.Default(), Count: memo.CountHash})
//	// res.Records feed package report
//
// RunTenant replays several sessions that share one provider account in
// global time order (a heap over their next events, ties by input order):
// a prefix one session cached is found by the next, and a session's
// subagents read their parent's floor. Records joins its results' records
// in session order, in the array they share.
//
// # One call
//
// For each assistant event of the transcript the engine:
//
//  1. advances the clock (below);
//  2. on a user message after an idle gap, lets the policy's Compactor act on
//     resume (prune or compact), telling it whether the cache is cold;
//  3. lets the Compactor act before the call (prune, masking, batch
//     compaction at the threshold, the breaker) — a summarizer call stalls
//     the turn by its latency;
//  4. renders the view into a request (prompt.Builder), lets the planner
//     mark breakpoints, freezes the request, sends it, and checks that
//     nothing changed it after the planner ran;
//  5. retries a transient provider error with exponential backoff (3
//     times), and a context overflow once, after the Compactor had a chance
//     to compact;
//  6. tells the Compactor what was billed (its anchor and its breaker);
//  7. at the end of a turn, lets the Compactor run micro-compaction or
//     sliding masking (a pass delays the turn's close, not the next call).
//
// The Compactor seam is the compaction ladder of package policies/compact;
// the engine never knows what a rung does. A compactor needs only
// BeforeCall and AfterResponse; one that acts on resume, at the end of a
// turn, on a restart or a model switch, or reports a threshold and
// estimates, implements the small optional interface for it (Resumer,
// TurnEnder, Restarter, ModelSetter, Gauge). Hook errors and summarizer
// stalls are returned to the step that called them; the clock moves in
// one place (run.advanceTo), never backwards. A forked summary (Claude
// Code's compaction) is a request the engine itself builds, freezes, sends
// and checks, like any call.
//
// # Time
//
// Human-paced events (user messages, resumes) keep their recorded times.
// Machine-paced ones (tool results, the next call of a turn) keep their
// recorded distance from the event before — from the recorded completion
// of a call, when the log gives its duration — measured from where the
// simulation is. A slower policy therefore ages the cache as it would
// really have, and a 4-minute gap stays a 4-minute gap.
//
// # Recorded sessions
//
// A recorded log does not show the system prompt or the tools: the floor
// is inferred from the first billed call, split into the part that call
// read from cache (written by an earlier session of the account, so Prewarm
// writes it first) and the session's own. Claude's tokenizer is not
// tiktoken: a Calibrator sizes blocks from o200k counts through a fit on
// the session's own billed prompt growth, in one of three modes —
// Anchored (call k sized from the billed size of call k−1 plus the
// calibrated size of what was added; the fidelity of a harness' own
// calibration loop), OpenLoop (a fit on a prefix of calls, then the
// transcript alone), Frozen (an anchored run's sizes reused, so a
// counterfactual prompt is the recorded prompt plus the calibrated size of
// what the policy changed). NewRecorded replays what the log shows;
// NewRecordedVariant changes one thing of it.
//
// # Rules
//
// Run is synchronous and a pure function of its inputs: no wall clock, no
// global randomness, no output that depends on map order; it stops with
// the context's error when its context is done. Running many replays on
// workers is package runner's job. Errors an API would answer are
// records; anything else (an unpriced model, a floor larger than the
// window, a request changed after freezing) stops the run with an error
// naming the session and event.
package sim

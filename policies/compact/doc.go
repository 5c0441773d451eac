// Package compact is the context-reduction ladder of an agent harness:
// batch compaction at a threshold, micro-compaction of one exchange per
// turn, the deterministic prune, the idle action on a resume, observation
// masking, and the circuit breaker that stops a compaction loop. It follows
// hermes-agent's agent/context_compressor.py and agent/micro_compaction.py
// (see ../shared/reference/hermes.md) and adds what hermes lacks: prune on
// resume, a reclaim gate for micro passes, and masking.
//
// It is real code a Go agent can import: it works on *prompt.View (the
// message list a harness sends) and returns new views; it never imports the
// simulator. Messages are immutable, so a rewrite shares every message it
// did not touch, and a hook that changes nothing returns the same pointer.
// Messages a pass made carry Event -1 and Tag BatchSummary or MicroSummary;
// messages it rewrote carry Tag Edited and keep their Event. Nothing is ever
// deleted from the transcript a view was projected from.
//
// # Typical steps
//
// One Manager per session, built from a Config (policies.Config holds one
// and reads hermes' config.yaml keys), the main model, a Summarizer (the
// auxiliary model; the simulator's fake bills and times it) and, for
// estimate.kind exact, a tokenizer-backed estimator:
//
//	m, err := compact.New(cfg, compact.Model{Name: "claude-sonnet-4-5", Window: 200_000, MaxOutput: 32_000}, sum, nil)
//	v, passes = m.OnResume(now, idle, prefixCold, v) // only on a resume after a gap
//	v, passes, err = m.BeforeCall(now, v)            // before every model call
//	records(m.Estimates(v))                           // each estimator's reading
//	resp := send(v)
//	passes = m.AfterResponse(now, v, billedPrompt, ok) // after it (ok=false: rejected)
//	v, passes = m.EndOfTurn(now, v)                  // after the turn's last call
//	m.Restart()                                       // a harness restart
//
// Every decision is a Pass (kind, trigger, outcome, tokens before and after,
// the summarizer call, telemetry); Committed reports whether it changed the
// view.
//
// # What each hook does
//
// BeforeCall: the proactive prune when the trigger estimator reaches
// compression.proactive_prune_tokens (committed only if it reclaims
// proactive_prune_min_reclaim_tokens, then re-armed after a trigger-sized
// runway); batched masking; then batch compaction when the estimate reaches
// Threshold() and the breaker allows it. With estimate.kind calibrated and
// no matching anchor, the first crossing waits one request for a billed
// reading (hermes' should_defer_preflight_to_real_usage). A floor that
// alone exceeds the effective window is ErrDoesNotFit.
//
// AfterResponse: re-anchors the calibrated estimator on the billed prompt;
// the first billed reading after a compaction is the breaker's verdict
// (still ≥ threshold: a strike; any reading below the threshold clears the
// strikes). A context-overflow rejection (ok=false with a rejected prompt
// at least the effective window) makes the next
// BeforeCall attempt a compaction whatever the estimate says, ignoring the
// failure cooldown once, as a provider-proven overflow does in hermes.
//
// EndOfTurn: sliding masking, and micro-compaction every
// micro_compact_every_n_turns turns (counted per call of EndOfTurn, so a
// turn with nothing to do still advances it).
//
// OnResume: after idle_compact_after_seconds, either a batch compaction
// (idle_action summarize, skipped at or below threshold × target_ratio) or
// the deterministic prune (idle_action prune), which acts only when the
// engine says the cached prefix is cold anyway, and then commits any
// positive reclaim.
//
// # Batch compaction
//
// Head: protect_first_n messages after the system prompt, decaying to 0
// after the first compaction. Tail: a token budget (lean: 2.5% of the
// window in 10K–25K; legacy: threshold × target_ratio) walked back with the
// compressor's per-message budget up to a 1.5× soft ceiling, never split
// inside a tool group, holding the last real user message. Phase 1 prunes
// deterministically (duplicate results, one-line summaries of long results,
// truncated long arguments, an oversized tail demoted). The window goes to
// the Summarizer with hermes' serialization caps and a size target
// (SummaryBudget); the result becomes a marker with SummaryPrefix, a
// Historical Task Snapshot holding the latest user ask, and EndMarker. The
// first compaction appends SystemNote to the system prompt (a real cache
// break). A summarizer failure inserts the deterministic Fallback (≤ 8000
// chars) unless abort_on_summary_failure, and arms the 60 → 300 → 900 s
// cooldown.
//
// # Circuit breaker
//
// Two ineffective compactions (strikes: a verdict over the threshold, or a
// no-op compaction) or two fallback summaries in a row trip it. When it is
// first found tripped a 300 s probation deadline is armed (in memory: a
// restart waits a fresh window); after it, the counters drop to one strike
// and one probe runs, so an ineffective probe re-trips at once. The
// counters and cooldown live in Durable, which Restart keeps.
//
// # Memo
//
// What the passes derive from a block alone (its rough size, a tool call's
// cut arguments, a tool result's one-line demotion and text hash) a Manager
// keeps in a Memo under the block's content hash. A new Manager has its own;
// ShareMemo gives it one shared with other sessions, so that a comparison's
// replays of the same sessions compute each once (the simulator shares one
// per experiment). A Memo is a cache of pure functions, neither Durable nor
// volatile state: decisions are the same with any Memo or none
// (ShareMemo(nil)), and Restart leaves it alone.
//
// # Simplifications and how they bias results
//
//   - The summary text is the Summarizer's; its size follows SummaryBudget
//     only as far as the fake honours TargetTokens. The SummaryPrefix
//     wording is ours, at the size of hermes' (so scaffolding costs are
//     right, the exact tokens are not).
//   - Lean tail mode keeps hermes' tail size but not its identifier index
//     and verbatim quotes of every user message inside the summary; lean
//     summaries here are smaller than hermes', which favours lean mode.
//   - No compression locks, watermarks or stale-generation discards: the
//     simulation is single-threaded, so the outcomes stale_generation and
//     watermark_unavailable never occur.
//   - Cooldowns climb the timeout ladder for every summarizer error.
//   - Directive-shaped summary content (hermes' threat filter) is not
//     detected; an empty or truncated summary is the only rejected answer.
package compact

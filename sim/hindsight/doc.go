// Package hindsight computes the hindsight optimum of a fixed sequence of
// requests: the cheapest bill any prompt-cache schedule could have reached
// on the fake Anthropic provider, the schedule that reaches it, and a proven
// lower bound. It is the yardstick a policy's regret is measured against,
// as Belady's clairvoyant algorithm is for cache replacement.
//
// The caller controls, on each request, where its up to four breakpoints go
// among the cacheable block boundaries and each one's TTL (none, 5m, 1h);
// everything else is fixed: the blocks, their hash chains and token ends,
// the send times, the model. The rules are the provider's own
// (provider.AnthropicStep): prefix matching by hash chain, the 20-block
// lookback, the minimum cacheable length, TTL refreshed on a hit, entries
// readable from the writer's TTFT, 1h before 5m, write premiums and read
// discounts.
//
// # Typical use
//
//	tape := &hindsight.Tape{Inner: provider.NewAnthropic(opts)}
//	res, _ := sim.RunTenant(sessions, pol, tape, simOpts) // the policy's run, taped
//	h, _ := hindsight.Solve(ctx, tape.Calls, hindsight.Options{Prices: card})
//	// h.CostUSD ≤ h.PolicyUSD; h.BoundUSD ≤ every schedule's bill;
//	// h.Schedule replays (Replay) to exactly h.CostUSD.
//
// # Observed events
//
// What a replay observed in the log and could not explain is part of the
// tape, the same in every schedule, never a choice: a re-send's read limit
// (Call.ReadLimit) and a read past the TTL (Call.KeepAlive). The search,
// the replays and the bound all revive the kept-alive entry as the
// provider does (provider.Revive), so the optimum reads it where a
// schedule's breakpoints reach it and nowhere else, and an event lowers
// the optimum by no more than it saves the optimum's own schedule
// (TestObservedEvents); the optimum is never above the policy's replay,
// which is one of the schedules Solve tries.
//
// # Pieces and conversations
//
// Solve cuts a tape where every call after a pause is sent after every
// entry before it has expired (segments) and solves the pieces alone: an
// account's sessions of different days share nothing, and each piece
// gets the whole beam. A piece with several conversations is also solved
// conversation by conversation and the schedules replayed together
// (perKeySearch), a candidate the joint search's shared beam may miss;
// with 4 or more (manyKeys) that is the only search. How a joint
// optimum splits between sessions (Separate) is in docs/metrics.md.
// These searches (every piece's joint one and each conversation's) are
// independent: Solve runs them all first, the largest first, then each
// piece's replays and bound, on the helpers of Options.Crew when it has
// one (package runner lends the solves one fewer helper than it has
// workers, so the solve every other cell finishes before uses the cores
// they leave). The result is the same with any crew.
//
// Solve is a dynamic program over cache states (see its comment); Bound is
// a per-token relaxation (see its comment). When the search's cost meets
// the bound, or the search was exhaustive, Result.Exact is set; otherwise
// GapUSD says how far from optimal the schedule may be.
//
// Solve's work per call is the states kept (Options.Beam) times the
// choices tried per state, each a provider step and a pass over the
// state's entries (a choice that would read and write what a sibling
// choice of the same state did is not stepped: outcome), plus a scan of the later calls for the prefixes they
// share (once per call and block, not per state). The states of a call
// are spans of flat arrays without pointers, reused from call to call and,
// through a pool, from one Solve to the next: a candidate state allocates
// nothing, and the GC has nothing to scan. Solve then replays a handful of
// schedules through the fake provider (the search's, the policy's with each
// TTL, one per conversation for per-conversation TTLs), each linear in
// the calls, the blocks converted once for all of them; Bound's work is
// one small dynamic program step per block of each call. Its memory is
// linear in the calls but for a call's candidate states, which grow with
// the entries alive at once: Options.MaxLayerEntries caps them
// (Result.Capped counts the calls cut).
// BenchmarkSolveBig times the largest shared session.
//
// A Memo solves each distinct tape once, for a caller that replays the
// same sessions under several policies (package runner keeps one per
// Setup): a policy that sent exactly what another sent gets its optimum
// without a search.
package hindsight

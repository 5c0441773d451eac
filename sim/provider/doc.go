// Package provider holds fake LLM providers that cache and bill requests
// exactly as the real services do (reference/providers.md §7).
//
// A Provider takes a frozen prompt.Request and the virtual time and returns
// usage and latency, or the error the API would answer (an *APIError: 400
// for too many breakpoints, a 1h breakpoint after a 5m one, a breakpoint on
// a block that cannot carry one, a prompt over the window). Providers keep
// their own cache state, per model: one instance per simulated tenant (a
// parent and its subagents share one; another account gets another).
//
//   - Anthropic: explicit breakpoints, hash-chain entries at breakpoint
//     boundaries, the 20-block lookback, per-model minimum length, 5m/1h
//     TTL refreshed on hit, the three-position billing of mixed TTLs, and
//     optional server-side tool-result clearing (ClearToolUses).
//   - OpenAI: automatic caching from 1024 tokens in 128-token steps,
//     retention per model family (in-memory: seeded 5–10 minute idle
//     eviction, reading into the last call's output; 24h: a family's idle
//     band, GPT-5.5 and later only), reads past the lifetime that a log
//     shows kept alive (docs/codex.md).
//   - DeepSeek: persisted prefix units (request ends, common prefixes,
//     fixed intervals), always on.
//   - VLLM: 16-token KV blocks, LRU under a KV capacity, full blocks only.
//
// Usage is always in the additive form billing reads (traces.Usage);
// Response.Wire keeps the provider's own convention (OpenAI's cached
// tokens inside prompt tokens, DeepSeek's hit/miss, vLLM's
// num_cached_tokens). Latency follows a linear model (Latency) with
// per-provider defaults and two summarizer presets (small-instruct,
// reasoning).
//
// The implicit caches match at block granularity: a block is a run of
// tokens, equal iff its hash is (see prefixIndex), which under-counts hits
// on blocks that changed after their first tokens.
//
// Typical steps:
//
//	p, err := provider.ByName("anthropic", provider.Options{Common: provider.Common{Prices: card}})
//	for each call {
//		req := builder.Build(model, view, output)
//		planner.Plan(req, ttl)
//		req.Freeze()
//		resp, err := p.Send(now, req) // resp.Usage, resp.TTFT, resp.Decode
//	}
//	provider.Release(p) // done: its cache maps serve the next provider
//
// Per-call work is proportional to what changed: Anthropic checks at most
// 21 boundaries per breakpoint; the implicit caches binary-search the
// cached prefix and insert only the new blocks.
package provider

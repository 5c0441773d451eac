// Package assent replays captured requests as they were sent (the as-sent
// policy) against the fake providers, and compares each call's bill with
// the replay's. A capture (package traces/capture) knows what a transcript
// can only suggest: every request's system prompt, tools, messages,
// cache_control markers and TTLs, and its settings. Replaying exactly that
// leaves the provider's rules as the only thing that can differ: which
// cached entry a call reads (lookback, sub-prefixes, TTL and its origin,
// invalidation by settings, minimum cacheable length), so every call that
// does not come out exact is a rule to fix or a fact the capture lacks.
//
// # Sizes come from the bills
//
// No tokenizer of Claude's is public, so block sizes are data taken from
// the bills, not predictions: a call's prompt is its billed input + writes
// + read; the end of its last marked block is its read + writes (what the
// API cached through the last marker); a call that read from cache read
// up to a block boundary, which the sizing places at the boundary nearest
// the read by a rough local count among those an earlier request of the
// account shares (or a marked one). A boundary once placed keeps its
// position for every later request sharing the prefix; the blocks between
// placed boundaries share the tokens by their local counts. An OpenAI
// response whose server ran a hosted tool and sampled again bills the
// tool's additions too (capture.MetaHosted): its bill places no boundary,
// the later bills size its request, and the rest is input past its last
// block. What the
// provider decides (hit or miss, which entry, how much is written and at
// which TTL) is not given to it.
//
// # Reads from outside the capture
//
// A call that reads a prefix no earlier request of the capture sent (a
// session before the capture started, another process of the account)
// reads an entry the capture cannot show being written. The replay writes
// it just before the call, as the engine pre-writes a shared floor, and
// counts the call as Outside: exact or not, it is not evidence for a
// provider rule.
package assent

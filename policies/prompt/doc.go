// Package prompt owns the request a harness sends and the view it is
// rendered from.
//
// A View is the message list a harness would send now (tools, system,
// messages); policies rewrite views and never the transcript. A Builder
// renders a view into a Request: a flat list of Blocks, each with its content
// hash, the hash chain of the prefix through it, and the prompt size through
// its end, which is all a provider cache needs. The Builder remembers the
// last request, so the work of a Build is proportional to what changed.
//
// Besides its blocks and breakpoints, a Request carries what the provider's
// rules need and a block cannot say: the settings that invalidate parts of
// the cache (Params), a top-level automatic cache_control (Automatic), and
// the window the harness asked for (Window, the 1M-context option). The
// Builder drops stale thinking blocks the way the Anthropic API does for
// the request's model (Wire.ThinkingByModel, StripsThinking).
//
// Typical steps of one call:
//
//	req := builder.Build(model, view, outputTokens) // project
//	planner.Plan(req, ttl)                          // mark ≤4 breakpoints
//	req.Freeze()                                    // nothing may change it now
//	resp, err := provider.Send(now, req)            // bill
//	if req.CheckFrozen() != nil { /* engine bug */ }
package prompt

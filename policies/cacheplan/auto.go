package cacheplan

import "github.com/ctxsim/ctxsim/policies/prompt"

// Auto is Anthropic's automatic mode (reference/providers.md §1.1): one
// top-level cache_control on the request, which the server applies to the
// last cacheable block, moving it forward as the conversation grows. It is
// a planner because what the server does with the top-level marker is
// exactly one breakpoint there; the lookback then finds the previous turn's
// entry as long as a turn adds at most 20 blocks.
type Auto struct{}

// Name implements Planner.
func (Auto) Name() string { return "auto" }

// Plan implements Planner.
func (Auto) Plan(req *prompt.Request, ttl prompt.TTL) {
	if ttl == prompt.NoCache {
		return
	}
	for i := len(req.Blocks) - 1; i >= 0; i-- {
		if req.Blocks[i].Cacheable {
			req.Mark(i, ttl)
			return
		}
	}
}

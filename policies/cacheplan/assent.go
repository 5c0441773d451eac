package cacheplan

import "github.com/ctxsim/ctxsim/policies/prompt"

// AsSent marks what the harness marked: each request's own cache_control
// markers and TTLs (prompt.Request.Sent), read from a capture of the
// requests it sent. It ignores the policy's TTL: the markers carry
// theirs. With it the fake provider bills what the harness sent, so a
// replay of a capture checks the provider's rules, not a planner's guess.
// Marks past the request (a capture that does not match its replay) are
// dropped; more than prompt.MaxBreakpoints is what the API would refuse
// and is passed on for the provider to refuse.
type AsSent struct{}

// Name implements Planner.
func (AsSent) Name() string { return "as-sent" }

// Plan implements Planner.
func (AsSent) Plan(req *prompt.Request, _ prompt.TTL) {
	for _, bp := range req.Sent {
		if bp.Block >= 0 && bp.Block < len(req.Blocks) && bp.TTL != prompt.NoCache {
			req.Mark(bp.Block, bp.TTL)
		}
	}
}

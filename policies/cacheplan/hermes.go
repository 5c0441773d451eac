package cacheplan

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// SystemAnd3 is hermes-agent's legacy layout (reference/hermes.md §1.2): the
// system prompt's last block, then the last 3 messages that can carry a
// marker. Without a system prompt the last 4 messages are marked, as hermes
// does when messages[0] is not a system message.
type SystemAnd3 struct{}

// Name implements Planner.
func (SystemAnd3) Name() string { return "system_and_3" }

// Plan implements Planner.
func (SystemAnd3) Plan(req *prompt.Request, ttl prompt.TTL) {
	if ttl == prompt.NoCache {
		return
	}
	m := make(marker, 0, 2*prompt.MaxBreakpoints) // on the stack: a plan allocates nothing
	m = m.add(lastOf(req, prompt.System))
	m = markLast(req, m, prompt.MaxBreakpoints-len(m))
	m.apply(req, ttl)
}

// markLast adds to m the last n messages that can carry a marker.
func markLast(req *prompt.Request, m marker, n int) marker {
	var buf [prompt.MaxBreakpoints]span
	for _, s := range lastMessages(req, n, buf[:0]) {
		m = m.add(markBlock(req, s))
	}
	return m
}

// Hermes is hermes-agent's static-prefix layout (reference/hermes.md §1.2):
// the static system prefix, the full system prompt, then the last 2 messages
// that can carry a marker.
//
// The view carries hermes' split of the system prompt as blocks: every
// system block but the last is the static prefix (identity, guidance,
// skills) and the last is the volatile suffix. With a single system block
// there is nothing to split, and Hermes falls back to SystemAnd3, as hermes
// does when the suffix is blank or the prefix does not match.
//
// With ToolCache set it uses the tool-cache layout of hermes.md §1.3 (direct
// native Anthropic with tools): the static system prefix only, the last tool
// schema, and the last 2 completed transaction endpoints.
//
// With ByRoute set (the "hermes" layout, every hermes preset's default) it
// chooses as hermes does, per route (OnRoute): the tool-cache layout on
// native Anthropic, the static-prefix layout elsewhere.
type Hermes struct {
	ToolCache bool
	ByRoute   bool
}

// Name implements Planner.
func (h Hermes) Name() string {
	switch {
	case h.ByRoute:
		return "hermes"
	case h.ToolCache:
		return "hermes_tools"
	}
	return "hermes_prefix"
}

// OnRoute implements RoutePlanner. hermes builds the tool-cache plan only
// when direct_native_tool_cache holds, api_mode anthropic_messages on
// api.anthropic.com (agent/prompt_caching.py build_prompt_cache_plan,
// anthropic_prompt_cache_policy branch 5; reference/hermes.md §1.3, §1.4):
// here the anthropic provider, the simulator's native Anthropic API. With
// no tools in a request, Plan falls back to the static-prefix layout, as
// hermes does.
func (h Hermes) OnRoute(provider string) Planner {
	if !h.ByRoute {
		return h
	}
	return Hermes{ToolCache: provider == NativeAnthropic}
}

// NativeAnthropic is the provider name of Anthropic's own API.
const NativeAnthropic = "anthropic"

// toolCacheEndpoints is how many completed transaction endpoints the
// tool-cache layout marks: 2, whatever breakpoints are left (hermes marks
// the last 2 even when the static prefix cannot be split, leaving one
// breakpoint unused).
const toolCacheEndpoints = 2

// Plan implements Planner.
func (h Hermes) Plan(req *prompt.Request, ttl prompt.TTL) {
	if ttl == prompt.NoCache {
		return
	}
	sys := systemBlocks(req)
	tool := lastOf(req, prompt.Tools)
	if h.ToolCache && tool >= 0 {
		m := make(marker, 0, 2*prompt.MaxBreakpoints) // on the stack: a plan allocates nothing
		if len(sys) >= 2 {
			m = m.add(sys[len(sys)-2])
		}
		m = m.add(tool)
		var buf [prompt.MaxBreakpoints]span
		for _, s := range endpoints(req, min(toolCacheEndpoints, prompt.MaxBreakpoints-len(m)), buf[:0]) {
			m = m.add(markBlock(req, s))
		}
		m.apply(req, ttl)
		return
	}
	if len(sys) < 2 {
		SystemAnd3{}.Plan(req, ttl)
		return
	}
	m := make(marker, 0, 2*prompt.MaxBreakpoints) // on the stack: a plan allocates nothing
	m = m.add(sys[len(sys)-2])
	m = m.add(sys[len(sys)-1])
	m = markLast(req, m, prompt.MaxBreakpoints-len(m))
	m.apply(req, ttl)
}

// endpoints returns up to n completed transaction endpoints, newest first,
// appended to out (hermes' _completed_transaction_endpoint_indexes): the
// final tool result of
// each assistant(tool_calls) → tool run, and ordinary turns that are not
// open. A user message counts as open unless it is the last message; an
// assistant message that calls tools is open until its results arrive.
func endpoints(req *prompt.Request, n int, out []span) []span {
	newest := true
	nextTool := false // whether the message after the current one is a tool result
	backward(req, func(s span) bool {
		if len(out) >= n {
			return false
		}
		tool := isTool(req, s)
		ok := false
		switch {
		case tool:
			ok = !nextTool
		case req.Blocks[s.lo].Role == prompt.RoleAssistant:
			ok = !callsTools(req, s)
		default: // a plain user message
			ok = newest
		}
		if ok && canCarry(req, s) {
			out = append(out, s)
		}
		newest, nextTool = false, tool
		return len(out) < n
	})
	return out
}

// isTool reports whether the message carries only tool results (hermes'
// role:tool rows, or a user message of tool_result blocks on the Anthropic
// wire).
func isTool(req *prompt.Request, s span) bool {
	if req.Blocks[s.lo].Role == prompt.RoleTool {
		return true
	}
	for i := s.lo; i < s.hi; i++ {
		if req.Blocks[i].Kind != traces.ToolResultBlock {
			return false
		}
	}
	return true
}

func callsTools(req *prompt.Request, s span) bool {
	for i := s.lo; i < s.hi; i++ {
		if req.Blocks[i].Kind == traces.ToolUse {
			return true
		}
	}
	return false
}

// Package cacheplan owns where a request's prompt-cache breakpoints go and
// which TTL they get.
//
// A Planner marks at most four breakpoints (the Anthropic limit) on a
// rendered prompt.Request. It runs last, after every policy that shapes the
// request; the engine freezes the request right after it. Planners:
//
//   - none: no breakpoints.
//   - system_and_3: hermes-agent's legacy layout, the system prompt plus the
//     last 3 messages that can carry a marker.
//   - hermes: what hermes picks for the route (a RoutePlanner): hermes_tools
//     on native Anthropic, hermes_prefix elsewhere.
//   - hermes_prefix: hermes' static-prefix layout, the static system
//     prefix, the whole system prompt and the last 2 messages.
//   - hermes_tools: hermes' tool-cache layout for direct native Anthropic,
//     the static system prefix, the last tool schema and the last 2
//     completed transaction endpoints (hermes_prefix without tools).
//   - claude-code: what Claude Code's recorded usage shows it marks (the
//     floor's stable part, the end of the system prompt, the end of the last
//     message); the evidence is in ClaudeCode's doc comment.
//
// A message that carries a registered scaffold (a skill, webhook or cron
// message whose builder said where its static part ends) is marked on the
// scaffold block, which the Builder split off when Wire.SplitScaffolds is
// set; the volatile tail stays unmarked. No planner searches for a
// delimiter.
//
// ChooseTTL resolves hermes' prompt_caching.cache_ttl setting ("5m", "1h",
// "auto", "off") for a session's source.
//
// Typical steps of one call:
//
//	p, err := cacheplan.ByName("system_and_3")
//	ttl, err := cacheplan.ChooseTTL("auto", session.Source) // once per session
//	req := builder.Build(model, view, output)
//	p.Plan(req, ttl)
//	req.Freeze()
//
// Planners look only at the blocks they mark near (the floor, the last few
// messages), so planning costs the same whatever the prompt's length.
package cacheplan

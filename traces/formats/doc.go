// Package formats lists the log formats ctxsim reads, each a
// traces.Importer, in the order format detection tries them, and opens
// paths with them:
//
//	ss, warns, err := formats.Open(ctx, []string{"~/.claude/projects"}, "", os.Stdin)
//
// native traces, hermes-agent state.db or exports, Codex rollouts, Claude
// Code logs (the default: the logs people have on disk) and, by name only,
// OpenAI-style chat logs. The importers themselves live in their own
// packages (traces/claudecode, traces/codex, traces/hermes,
// traces/chatlog); this package only adapts them to one interface, so a
// program that wants one format imports that package alone.
package formats

// Package claudecode imports Claude Code session logs
// (~/.claude/projects/<project>/<session>.jsonl) into native sessions, and
// reads their billed usage fast for `ctxsim cost`.
//
// Typical steps:
//
//	sessions, warnings, err := claudecode.Import("~/.claude/projects") // transcripts
//	usage, warnings, err := claudecode.ScanUsage(paths...)             // usage only, fast
//
// A file path imports that file alone; a directory imports every .jsonl
// under it, so a session's subagents (<session>/subagents/agent-*.jsonl,
// or agent-*.jsonl beside it in older versions) come with it only when
// the directory is given.
//
// # What a log holds and what the importer makes of it
//
//   - One API response is spread over several assistant lines, one content
//     block each, with the same message.id and requestId. They become one
//     Assistant event at the first line's place and time, blocks merged in
//     order. Every line repeats the usage block, but output_tokens grows: the
//     last line's usage is the final one and is the one kept. LatencyMS is
//     the last line's time minus the time of the event the call answers.
//   - Each tool result is its own user line; consecutive results become one
//     ToolResult event, as the API receives them in one user message, in
//     the order of their tool_use blocks; those received before the last
//     one and placed after it are marked Early (Claude Code's cache mark
//     sits on the one received last: cacheplan.ClaudeCode). A
//     tool_result whose tool_use was never seen is kept, with a warning.
//     Result content that is an array keeps its text (joined by newlines);
//     its images follow as Image blocks.
//   - Thinking blocks are kept as Thinking with their text; redacted ones as
//     Thinking named "redacted" with no text.
//   - Images are opaque blocks sized by Anthropic's rule (w×h/750, at most
//     1600 tokens) when their header decodes, else 1600 tokens.
//   - system compact_boundary becomes a Compaction event with Meta trigger
//     and pre_tokens; the continuation summary that follows ("This session
//     is being continued…", isCompactSummary) is a User event with Summary.
//     Other system lines (stop_hook_summary, turn_duration, local_command),
//     progress, file-history-snapshot, queue-operation and summary lines are
//     never sent to the model and are skipped silently. isMeta user lines
//     (injected reminders) are kept with Meta meta=true.
//   - A prompt's thinkingMetadata (2.0.0–2.1.46) is kept as Meta
//     traces.MetaThinking: "max=N", "level=L" or "disabled".
//   - Lines with agentId belong to a subagent: the session id is
//     "<parent>.agent-<agentId>", Source subagent, Parent the parent id. The
//     agent-acompact-* subagent is the compaction's summarizer call; its
//     Format is FormatCompaction so the engine can bill it as such.
//   - isSidechain lines inside a main session file (older versions logged
//     subagent turns inline) are kept in place, marked Meta sidechain=true;
//     nothing is reordered or dropped.
//   - Assistant messages with model "<synthetic>" (Claude Code's own error
//     notices) are not model calls and are skipped with a warning.
//   - The usage split cache_creation.ephemeral_5m/1h is kept; when it is
//     missing, all writes count as 5m, with a warning.
//
// The floor (system prompt and tool schemas) is not in the logs and is left
// empty; the engine infers its size from the first billed call.
//
// # Bad input
//
// Nothing in a file stops an import except a read error. A bad line is
// skipped or repaired and counted in traces.Warnings by what was done:
// invalid JSON, a truncated last line (a log still being written), a line
// over 64 MiB, invalid UTF-8 (repaired), an unknown record type, a
// timestamp going backwards (clamped, so event times never decrease), an
// assistant line without usage (kept, unbilled).
package claudecode

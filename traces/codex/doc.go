// Package codex imports Codex CLI rollout logs
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) into the native trace
// model, one session per file.
//
// Each line is an envelope {timestamp, type, payload}:
//
//   - session_meta: id, cwd, cli_version, originator, source; newer CLIs
//     embed the system prompt (base_instructions.text, older: instructions),
//     which becomes the floor. Tool schemas are never logged, so the floor
//     is incomplete and a Note says so. A subagent rollout
//     (source {"subagent":...}) links to parent_thread_id.
//   - turn_context: the model (and effort) of the turn; a change of model is
//     a ModelSwitch event.
//   - response_item: message (user/developer input, assistant output),
//     reasoning (its summary text; encrypted content counts 0),
//     function_call / custom_tool_call / local_shell_call and their
//     *_output paired by call_id, web_search_call (a server-side tool with no
//     output item), compaction (encrypted remote summary).
//   - event_msg: token_count{info{last_token_usage, total_token_usage}}
//     gives the usage of the call it follows; task_started gives the context
//     window; turn_aborted marks the call in progress (Meta "aborted"). The
//     many UI events that mirror response items are skipped.
//   - compacted: a local compaction with its summary message: a Compaction
//     event, then the summary as a User event with Summary set.
//
// # Usage
//
// Codex's input_tokens includes the cached tokens, so Usage.Input =
// input − cached (− cache_write_input_tokens when a CLI reports it, billed
// as 5m writes), CacheRead = cached; output includes reasoning tokens.
// A token_count whose total_token_usage equals the previous one is a
// rate-limit refresh, not a call, and is skipped. At the end, the sum of the
// per-call readings is checked against the last total_token_usage.
//
// One assistant event is one model call: the output items between two
// inputs (user message, tool output) or token_counts. Its LatencyMS is the
// time from the input it answers to its token_count.
//
// Bad input (truncated, invalid JSON or UTF-8, over-long lines, unknown
// types, timestamps going backwards, calls without usage, outputs without a
// call) is a counted warning, never a dropped call.
package codex

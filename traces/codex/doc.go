// Package codex imports Codex CLI rollout logs
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) into the native trace
// model, one session per file. Under a directory, a .jsonl file named
// otherwise is read too when its first line is a session_meta.
//
// Each line is an envelope {timestamp, type, payload}:
//
//   - session_meta: id, cwd, cli_version, originator, source; newer CLIs
//     embed the system prompt (base_instructions.text, older:
//     instructions) and the client's dynamic tools (dynamic_tools, ~20 KB
//     of schemas), which become the floor, less the tools deferred to
//     tool search. Codex does not log its built-in tool schemas, so the
//     floor is partial (Session.FloorPartial) and a Note says so. A
//     subagent (source {"subagent":{"thread_spawn":{"parent_thread_id"}}},
//     or parent_thread_id) links to its parent.
//   - turn_context: the model (and effort) of the turn; a change of model is
//     a ModelSwitch event.
//   - response_item: message (user/developer input, assistant output),
//     reasoning (its summary text, and its encrypted content as an opaque
//     thinking block sized from the call's reasoning_output_tokens, see
//     reasoning.go), function_call / custom_tool_call / local_shell_call
//     and their *_output paired by call_id, tool_search_call and
//     tool_search_output (the schemas the search loaded), web_search_call
//     and image_generation_call (server-side tools: a tool use named by
//     its line, and the call marked traces.MetaServerTools), agent_message
//     (another agent's message, plain or encrypted: a user event with role
//     "agent"), compaction (an encrypted remote summary, sized from its
//     length: compactionTokens).
//   - event_msg: token_count{info{last_token_usage, total_token_usage}}
//     gives the usage of the call it follows; task_started gives the
//     turn's context window (a later turn with another is a ModelSwitch
//     event carrying traces.MetaWindow); turn_aborted marks the call in
//     progress (Meta "aborted"); thread_rolled_back{num_turns} drops the
//     last user turns (the next user message carries traces.MetaRewindTo).
//     The many UI events that mirror response items are skipped.
//   - compacted: a compaction: a Compaction event, then what it leaves as a
//     continuation summary (a User event with Summary set), its
//     replacement_history when it has one (remote: the kept user messages,
//     the developer message and the encrypted item), else the initial
//     context, the latest user messages and the summary (compact.go).
//   - world_state: the harness's baseline for its next context diff; no
//     content of its own, skipped.
//
// # Forks
//
// A forked rollout starts with its own session_meta (forked_from_id), then
// the parent's, then a copy of the parent's history stamped with the fork's
// time; its own lines start at the first task_started whose UUIDv7 turn_id
// is later than its id (fork.go). The copy is its starting context (copied
// calls carry traces.MetaCopied), and only the token_counts after it are
// its calls: the parent's file is not needed.
//
// # Usage
//
// Codex's input_tokens includes the cached tokens, so Usage.Input =
// input − cached (− cache_write_input_tokens when a CLI reports it, billed
// as 5m writes), CacheRead = cached; output includes reasoning tokens.
// A token_count whose total_token_usage equals the previous one is a
// rate-limit refresh, not a call, and is skipped. At the end, the sum of the
// per-call readings is checked against the last total_token_usage (less
// the total a fork carried on from).
//
// One assistant event is one model call: the output items between two
// inputs (user message, tool output) or token_counts. Its LatencyMS is the
// time from the input it answers to its token_count.
//
// Bad input (truncated, invalid JSON or UTF-8, over-long lines, unknown
// types, timestamps going backwards, calls without usage, outputs without a
// call) is a counted warning, never a dropped call.
//
// testdata/layouts holds a synthetic rollout of each layout, written by
// layouts_gen_test.go from the Codex source it cites.
package codex

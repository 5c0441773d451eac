// Package capture imports captured API traffic: the exact request bodies a
// harness sent and the responses the provider billed, as capture proxies
// record them. A capture is the one source that shows what a transcript
// can only suggest: the system prompt and tool schemas, every
// cache_control marker and its TTL, the thinking, tool_choice and
// context_management settings of each call, and the usage of each
// response.
//
// # Inputs
//
//   - claude-tap traces (github.com/liaohch3/claude-tap): one JSON
//     document {session, agent, task, packets:[{index, method, path,
//     http_status, request:{headers, body}, response:{status, headers,
//     body}}]}, streamed responses already reassembled into one body.
//   - claude-trace RawPair JSONL (github.com/badlogic/lemmy, also what
//     ctxsim record writes): one line per pair {request:{timestamp,
//     method, url, headers, body}, response:{timestamp, status_code,
//     headers, body | body_raw}}, body_raw holding a streamed (SSE)
//     response, reassembled here: Anthropic's message_start,
//     content_block_* and message_delta events; OpenAI's
//     response.completed, or chat-completions chunks with their final
//     usage.
//   - HAR 1.2 archives (log.entries[]: request postData, response content;
//     *.har is read by name, its first line being only "{").
//   - OpenTelemetry GenAI spans in OTLP JSON (resourceSpans[]): each span
//     with gen_ai.usage.* is a call, its messages from
//     gen_ai.input.messages and gen_ai.output.messages; no markers.
//
// Requests are Anthropic Messages (/v1/messages), OpenAI Responses
// (/v1/responses, including Codex's WebSocket calls that continue a
// previous_response_id) and OpenAI Chat Completions. Other requests
// (model lists, count_tokens) are not model calls: they are skipped and
// counted.
//
// # Sessions
//
// Each request repeats the conversation so far, so a call continues the
// session whose last request plus its response is a prefix of the call's
// messages (markers ignored: Claude Code moves its last-message marker
// every call); a call extending no session starts one, as chatlog groups
// requests. Side requests (a title, a compaction's summary request, a
// subagent) so become sessions of their own, all on one account
// (Session.Tenant is the file's), as they shared one provider cache. A
// change of tools or system prompt mid-session is a floor_change event
// with the new floor.
//
// Each call's request settings are kept on its assistant event (Meta keys
// below), so a replay can send what was sent: MetaMarks, MetaThinking,
// MetaToolChoice, MetaContextManagement, MetaAutomatic.
package capture

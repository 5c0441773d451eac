// Package record is a recording reverse proxy for the Anthropic Messages
// API and the OpenAI Responses and Chat Completions APIs: point a harness
// at it (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, or any SDK's base URL) and it
// forwards every request to the real API, unchanged, and writes one JSON
// line per request/response pair in claude-trace's RawPair format
// ({request:{timestamp, method, url, headers, body}, response:{timestamp,
// status_code, headers, body | body_raw}}), which package capture reads.
//
// What it guarantees:
//
//   - Secrets never reach the file: every header whose name says it
//     carries a credential (Authorization, X-Api-Key, Api-Key, Cookie,
//     anything with "key", "token", "secret", "auth", "cookie",
//     "signature" or "account" in its name) is written as "[REDACTED]",
//     and so is a query parameter so named.
//   - Bounded memory: a request or a non-streamed response body is kept
//     up to Options.MaxBody (the rest is forwarded, not recorded, and the
//     line says body_truncated); a streamed (SSE) response is forwarded
//     as it arrives and kept up to MaxBody, past which only the events
//     that carry usage (message_start, message_delta, response.completed,
//     error, chunks with usage) are kept, so the bill is never lost.
//   - The upstream's answer is the client's: status, headers and body go
//     through unchanged, errors included; when the upstream cannot be
//     reached the client gets 502 and the line records the error.
//   - WebSocket upgrades go through (the upstream's side of the
//     connection is a wsTap, which httputil writes to as well). The
//     Responses API over a WebSocket (Codex) is recorded call by call:
//     the response.create message is the request body, the events that
//     answer it, up to response.completed, the response's SSE stream
//     (method WEBSOCKET), frames read in both directions and inflated
//     when permessage-deflate was agreed. What it cannot read goes
//     through unrecorded, counted (Recorder.Warnings).
//   - Lines are whole: each pair is written with one write when its
//     response ends (or fails), under a lock; Close waits for the pairs in
//     flight, so a stop (SIGINT) leaves no half line.
//
// The proxy reads no clock of its own: Options.Now stamps the pairs.
package record

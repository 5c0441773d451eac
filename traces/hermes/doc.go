// Package hermes imports hermes-agent sessions into the native trace model,
// from either of the two places they live:
//
//   - `hermes sessions export --format json|jsonl`: one session object (or
//     an array) as JSON, or one per line as JSONL. Each object is the
//     sessions row plus "messages", the message rows; a lineage export's
//     "segments" are imported as the sessions they were (ReadExport);
//   - ~/.hermes/state.db read directly with the pure-Go modernc.org/sqlite
//     driver, opened read-only (mode=ro, query_only) so a running hermes is
//     not disturbed, and read as SQLite reads it: locks and a hot rollback
//     journal honoured (ReadDBWithin), any storage class in any column
//     (text in a count is counted as 0 and warned). Only the columns the
//     import uses are selected; optional columns an older schema lacks
//     read as NULL, and a missing usage column is warned about (ReadDB).
//
// Import sniffs which one a path is; a file named as a database (.db,
// .sqlite, .sqlite3) is read by SQLite whatever it holds.
//
// # Mapping
//
// Message rows are OpenAI-style (role, content, tool_calls as JSON text,
// tool_call_id), so events are built with chatlog.Transcript: an assistant
// row is one model call, with its reasoning as a thinking block; a tool row
// is a tool result paired by tool_call_id. Timestamps are REAL epoch
// seconds. sessions.source is Session.Source; the system prompt (legacy
// column, or system_prompts via system_prompt_hash) is the floor; hermes
// stores no tool schemas. parent_session_id links parent and child.
//
// # Compaction
//
// An in-place compaction soft-archives the rows it summarized (active=0,
// compacted=1) and inserts the new live list. The importer keeps the
// archived rows as events, in id order, emits a Compaction event (Meta
// mode=in_place) where the archived rows end, and marks the summary row
// (_compressed_summary, or a hermes summary prefix) as a User event with
// Summary set (Meta role=assistant when hermes stored it as an assistant
// row). In legacy rotating mode the child session starts with the summary:
// it gets a Compaction event with Meta mode=rotate. Rows that are inactive
// but not compacted are kept and counted in the warnings.
//
// # Usage
//
// hermes keeps usage per session, not per request (reference hermes.md §9),
// so no event carries Usage: splitting the totals across calls would invent
// data. The session row's totals are kept in a Session.Notes entry starting
// with TotalsPrefix, and Totals reads them back (writes as 5m writes, since
// hermes does not split them by TTL). The hermes `input_tokens` column is
// already uncached input.
//
// # Simplifications
//
// When hermes re-inserts protected head or tail messages after a
// compaction, those copies are events after the Compaction event, exactly
// as the live list holds them; the archived originals stay before it. A
// replay therefore sees what hermes sent. Warnings about DB rows name them
// "state.db#messages:ID".
package hermes

// Package traces owns the conversation data model and the native trace
// format.
//
// A Session is one conversation: metadata, the floor (system prompt and tool
// schemas, sent first on every request) and an ordered list of Events. An
// Event is a user message, an assistant message (one model call, with the
// usage the provider billed when it was recorded), a tool result, a model
// switch, a recorded compaction, a resume or a restart. Content is a list of
// Blocks; a block the log does not show holds only its token size.
//
// The transcript is append-only: policies never edit it, they project it
// into views (package policies/prompt).
//
// # Native format
//
// One JSON object per line, UTF-8. The first line is the header:
//
//	{"format":"ctxsim-trace","version":1,"session":{"id":"s1","source":"cli","model":"claude-opus-4-6",...}}
//
// then one Event per line, in transcript order. docs/trace-format.md is the
// full specification. Reader reads it like bufio.Scanner and stops at the
// first bad line with a *SyntaxError ("file:line: reason"); WriteSession
// writes it canonically, so read-then-write reproduces the bytes.
// CheckFiles lints native trace files given together (Validate, and the
// parent/children links between them); ReadSessionPath reads one by the
// path a command line names ("-" for stdin), and ImportPaths reads paths
// with one Importer.
package traces

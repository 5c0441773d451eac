// Package claudecode is what Claude Code itself does to its requests, by
// version, as its shipped code shows it: where it puts cache marks, which
// thinking settings it sends, what it clears on its own. The recorded
// replay of a Claude Code log follows the version that wrote the log
// (traces.Session.Harness), so a rule that changed between versions is
// applied to the sessions of the versions that have it, not fitted to the
// sessions a corpus happened to hold.
//
// Every rule names the versions it holds for and the shipped code it was
// read from (npm pack @anthropic-ai/claude-code@VERSION; cli.js, whose
// identifiers are minified, so the comments quote strings and structure).
// A version the package cannot parse (an empty Harness: a native trace, a
// log without version fields) gets the newest behaviour.
//
//	v := claudecode.VersionOf(session.Harness) // "claude-code 1.0.89"
//	marks := claudecode.MessageMarks(v)        // 2 before 2.1.69, then 1
package claudecode

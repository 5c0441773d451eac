// Package jsonl reads the line-delimited JSON logs that agent harnesses
// write (Codex rollouts, hermes exports, chat-completions request logs,
// trajectory dumps) without trusting them.
//
// A log on a user's disk is not a trace a program wrote for us: the last
// line may be cut off by a crash, a line may hold invalid UTF-8 or be
// hundreds of megabytes of tool output. Scanner turns each of those into a
// counted warning (traces.Warnings) and keeps reading, so one bad line costs
// one record, and the user is told how many and where.
//
// Typical use:
//
//	sc := jsonl.NewScanner(f, "rollout.jsonl", &warns)
//	for sc.Scan() {
//		var v record
//		if !sc.Decode(&v) { continue } // warned already
//	}
//	if err := sc.Err(); err != nil { ... } // I/O errors only
//
// Files lists the log files under a path. The package is internal to
// traces: the codex, hermes and chatlog importers are its users, and it
// depends on none of them.
package jsonl

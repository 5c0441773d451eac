// Package usage groups billed API calls into the reports ccusage users
// know: by session, day, week, month, 5-hour billing block, project or
// model, each group with its first and last activity, its tokens by class,
// its cost and cache hit rate, and a per-model breakdown.
//
// Typical steps:
//
//	calls := []usage.Call{{Time: t, Session: "s1", Project: "p", Model: "claude-opus-4-6", Usage: u}, ...}
//	rep := usage.Aggregate(calls, pricing.Default(), usage.Options{By: usage.ByDay, Loc: time.UTC})
//	for _, g := range rep.Groups { ... g.Key, g.CostUSD, g.Models ... }
//	rep.Unpriced // models the card could not price: their calls cost $0 here
//
// The rules follow ccusage 20.0.24 so that daily, monthly and per-model
// totals agree with it on the same logs and timezone:
//
//   - a day, week or month is the calendar one of the call's timestamp in
//     Options.Loc; a week starts on Options.WeekStart and is keyed by its
//     first date (ccusage's weekly report starts weeks on Monday, its
//     "claude weekly" report on Sunday by default);
//   - a block is Anthropic's 5-hour usage window as ccusage computes it:
//     calls sorted by time; a block starts at the first call's time floored
//     to the UTC hour and takes every later call until one comes more than
//     5 hours after the block's start or after the previous call, which
//     starts the next block. ccusage also lists the idle "gap" between
//     blocks as a block of its own; a gap has no usage and is not listed
//     here. Blocks are keyed by their start, in Options.Loc;
//   - Since and Until bound the call's timestamp, both inclusive.
//
// Each call is priced at its own model's rate. A model the Pricer does not
// know costs $0 and is listed in Report.Unpriced with the sessions that
// used it; it never stops the others from being priced.
//
// The cost report of recorded sessions (ctxsim cost) is built here too:
// Load reads sessions' billed calls (Claude Code logs by the fast
// claudecode.ScanUsage, every other format through its importer), and
// CostOf groups them, subagents in their root session, with BySession's
// tree of sessions and subagents; report.WriteCost renders it. A cost
// scan shards by project directory of Claude Code log trees (a resumed
// session copies its history into a new file of the same project, so a
// project's files are scanned together): ScanShard scans the projects a
// shard.Spec owns, each an entry of the shard's part, and MergeShards
// reads the merged entries back, both in the one-process scan's order;
// Grouping is the grouping a shard's manifest keeps for merge.
//
// Calls without a timestamp are grouped under "(no time)" by day, week,
// month and block, calls whose log gave one no call has (not RFC 3339, or
// before 2000 or after 2099, as Go's zero time 0001-01-01T00:00:00Z) under
// "(bad time)"; Since/Until skip both, with a warning.
package usage

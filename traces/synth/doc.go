// Package synth generates seeded, deterministic synthetic sessions in the
// native trace model, with real text so that token counts are real.
//
// Typical steps:
//
//	ss, err := synth.Generate(ctx, "coding-burst", 20, 1, synth.Options{})
//	st := synth.Measure(ss, tok) // calls, tokens, gap quantiles
//	for _, s := range ss { traces.WriteSession(w, s) }
//
// "ctxsim gen" does the same from the command line, and "ctxsim gen --list"
// lists Profiles.
//
// # Determinism
//
// One seed drives everything. Session i of profile P draws from
// rand.New(rand.NewPCG(seed, Stream(P, i))), and every distribution
// (gonum stat/distuv LogNormal, Poisson, Gamma) takes that *rand.Rand as
// its Src. Session i is the same whatever n is. Subagent children draw from
// their own stream (seed, hash of the child id); the cron scaffold from
// (seed, Stream("cron/scaffold", 0)), so every run of one job sends the
// same scaffold bytes. Nothing reads the clock: session 0 starts at
// Options.Start (DefaultStart, Monday 2026-01-05 09:00 UTC), session i a
// day later (cron: i job intervals later).
//
// # Sessions
//
// IDs are "<profile>-<seed>-<n>" (children "<...>-c<k>"); Format is
// "synth:<profile>"; Notes[0] is "synthetic: profile P, seed S". The floor
// is the harness's (tools first, then the system prompt) and depends on the
// harness only: the Claude-Code-like coding floor is 17,948 o200k tokens
// (12 tool schemas and a system prompt with project instructions), the
// cron floor 2,799. Assistant events carry no Usage (nothing was billed);
// Meta["output_tokens"] is the output the call produced, from the measured
// ratios below (within ±15% of o200k, tested). Tool results carry the tool
// run time in LatencyMS; one tool_result event answers every tool_use of
// the call before it. Event times are plausible but nominal for
// machine-paced steps (a call takes 1.2 s + 15 ms per output token): the
// engine's time model recomputes those; human gaps are the data.
//
// # Profiles
//
//   - all-day: one conversation: a terminal morning (~6 turns), phone
//     messages at lunch (Meta["source"]="messaging", short, few tools), a
//     terminal afternoon, and a cron-style run at 02:00 the next night
//     (Meta["source"]="cron", scaffold registered). Session.Source is cli.
//   - coding-burst: 1+Poisson(8) turns, the fitted calls per turn and tool
//     mix, human gaps from 3 s to 10 min.
//   - review: a whole-project review in a 400K window; turns are added until
//     the transcript reaches Length × 75K tokens (hermes.md §5's example),
//     with 12-minute reading gaps: ~3.3 h at Length 1.
//   - cron: Source cron, model claude-haiku-4-5, one run per session spaced
//     by the job's interval (15 min, 30 min or 1 h, drawn from the seed),
//     all sessions in Tenant "cron-<seed>". The user message is a static
//     scaffold of ~5.6K tokens (instructions, an inventory, a report
//     template) and a volatile tail of ~100-600; Block.ScaffoldEnd is
//     the byte offset where the scaffold ends, registered by the code that
//     builds the message (hermes.md §1.2), never found by searching.
//   - subagents: a coding session whose middle turn fans out to 2-6
//     parallel Task calls; each child (Source subagent, Parent set, Tenant =
//     parent ID, the parent's floor) runs from the fan-out time, and the
//     parent's tool result is the child's final report, with the child's
//     duration as LatencyMS. Generate returns each parent then its children.
//   - multilingual: coding-burst where 75% of the prose (user messages,
//     replies, thinking, fetched pages) is Chinese, Japanese, Russian or
//     Arabic (one per session, in Notes); code and shell stay English.
//
// # Content and chars per token
//
// Text is recombined from ~35 KB of embedded seed text (corpus/): code
// units with fresh identifiers, prose re-sampled by sentence, and shell
// output, JSON records, grep hits and diffs built from templates. Measured
// with o200k_base on 50 samples of ~4,000 characters (runes) each
// (TestCharsPerToken pins them to ±0.02):
//
//	code 3.61   prose 4.70   json 3.26   shell 3.18   diff 3.53
//	cjk 1.45    cyrillic 3.77   arabic 3.35
//
// Simplification: the corpora are small, so content repeats much more than
// in a real project. Token counts per character are realistic; anything
// that deduplicates or compresses text (a content-addressed cache, a
// summarizer judged on novelty) finds synthetic sessions easier than real
// ones.
//
// # Fitted distributions
//
// From testdata/claude-code (the shared, sanitized Claude Code sessions:
// 6 files, 169 calls, 207 tool results); TestFitClaudeCode recomputes them:
//
//	tool result size   LogNormal(ln-mean 5.78, ln-sd 2.52) bytes, n=207, capped at 30,000
//	tool run time      LogNormal(5.44, 2.91) ms, n=207 (median ~0.2 s), capped at 10 min
//	text block size    LogNormal(4.41, 1.50) chars, n=110
//	calls per turn     LogNormal(1.73, 1.42), n=11 turns (1 to 76 calls)
//	tool mix           Bash 38, Read 24, Edit 15, Glob 6, Grep 6, Write 4, WebSearch 3, WebFetch 2 (%)
//
// Human think time is LogNormal(4.70, 1.64) s, median 110 s, fitted to
// claude-code#74075 (27% of 1,967 replies after 5 min, 10% after 15 min):
// the shared logs hold only four typed replies (80-115 s, which agree) and
// one 4 h idle. Profiles clip it to their range (coding-burst 3 s-10 min).
// Other parameters (turns per session, review and cron sizes, the lunch and
// overnight schedule of all-day) are chosen, not fitted; they are set in
// profiles.go with the reason beside them. Draws outside a cap are
// resampled (then clamped), which trims the heavy tails a little: sessions
// are slightly lighter than the fitted distributions imply.
//
// Measured for seed 1, 2 sessions (TestProfileStats pins these):
//
//	profile        calls  transcript tokens  gap p50  gap p90
//	all-day          344            351,482    2m39s  2h33m12s
//	coding-burst     106             93,538    1m19s    3m51s
//	cron               5             14,312        -        -
//	multilingual     283            320,694      56s    5m21s
//	review           128            143,215   13m33s   20m40s
//	subagents        259            265,639    1m57s    6m27s
package synth

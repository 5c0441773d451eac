package main

import (

	// --timezone takes IANA names on machines without a zoneinfo database.
	_ "time/tzdata"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/usage"
)

func init() {
	register(&command{
		name:    "cost",
		summary: "what recorded sessions actually cost, by session, day, week, month, block, project or model",
		usage:   "[flags] PATH...",
		help: `Cost reads recorded sessions and prices the usage their provider billed:
the requests, input, 5m and 1h cache writes, cache reads and output tokens,
the cost in USD and the token-weighted cache hit rate, read ÷ (input +
writes + read), with the first and last activity of every row and each
model's share. Each call is priced at its own model's rate, so mixed-model
sessions come out right.

--by groups the calls: session (the default: each session, its subagents
listed indented under it and counted once), day, week, month, block (the
5-hour usage windows, as ccusage computes them), project or model. Days,
weeks and months are calendar ones in --timezone (default: this machine's
zone; "UTC" or an IANA name such as Europe/Berlin); weeks start on
--week-start. --since and --until keep the calls between two dates (whole
days, inclusive) or RFC 3339 times. In --by session, a subagent has its own
row under its parent; in every other grouping (and in the JSON "groups")
its calls count in its root session, as ccusage counts them.

PATH is a file or a directory searched recursively. Claude Code logs,
Codex rollouts and native traces are told apart by content; --from names
another registered format. A directory brings a session's subagents with
it; a single file is that file alone. The project of a Claude Code session
is its folder under ~/.claude/projects (else the folder holding it); of
any other log, the PATH it was found under.

Claude Code logs take a fast path that decodes only the lines carrying
usage; a response logged over several lines counts once, with its final
usage, and a subagent's responses echoed in its parent's progress lines
count when no file of its own holds them, as ccusage 20.0.24 counts them.

Prices come from the embedded rate card, backed by an embedded LiteLLM
snapshot (every model ccusage prices, OpenAI's GPT-5.x families included);
--prices FILE (a LiteLLM model_prices_and_context_window.json) overrides or
extends both. 1h cache writes cost 2× input, 5m writes 1.25×, as Anthropic
bills them and as ccusage 20.0.24 prices them. A model with no price costs
$0 with a warning naming it, and the other calls are priced as usual.

Examples:
  ctxsim cost ~/.claude/projects
  ctxsim cost --by day --timezone UTC testdata/claude-code
  ctxsim cost --by month --json ~/.claude/projects
  ctxsim cost --by block --since 2026-02-10 --until 2026-02-10 --timezone UTC testdata/claude-code
  ctxsim cost --by model --format csv testdata/claude-code
  ctxsim cost --prices model_prices_and_context_window.json ~/.codex/sessions
  ctxsim cost --from native traces/a.jsonl traces/b.jsonl`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			from := fs.String("from", "", "input format: native or a registered importer (default: detect native, codex or claude-code)")
			prices := fs.String("prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
			by := fs.String("by", "session", "group by session, day, week, month, block, project or model")
			since := fs.String("since", "", "keep calls from this date (2006-01-02 or 20060102, inclusive) or RFC 3339 time")
			until := fs.String("until", "", "keep calls up to this date (inclusive) or RFC 3339 time")
			tz := fs.String("timezone", "", `timezone of days, weeks, months and times shown: "UTC" or an IANA name (default: local)`)
			weekStart := fs.String("week-start", "monday", "first day of a --by week week (ccusage weekly: monday; ccusage claude weekly: sunday)")
			var format formatFlags
			format.add(fs, "same as --format json")
			fs.Bool("ccusage", false, "no effect: ccusage 20.0.24 prices 1h writes as ctxsim does")
			_ = fs.MarkDeprecated("ccusage", "ccusage 20.0.24 prices 1h cache writes at the 1h rate, as ctxsim always has: the figures already agree")
			var sh shardFlags
			sh.flag(fs, "project directories (of Claude Code logs)")
			out := fs.StringP("out", "o", "", "with --shard: the directory to write the shard's part to, for ctxsim merge")
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH")
				}
				f, err := format.parse()
				if err != nil {
					return err
				}
				if err := sh.parse(*out); err != nil {
					return err
				}
				if *out != "" && !sh.sp.Sharded() {
					return usagef("--out is where a --shard writes its part; cost prints its report")
				}
				if *from != "" {
					if _, err := traces.Lookup(formats.All(), *from); err != nil {
						return fromError(err)
					}
				}
				render := shard.CostRender{By: *by, Since: *since, Until: *until, Timezone: *tz, WeekStart: *weekStart}
				opts, err := costOptions(render)
				if err != nil {
					return err
				}
				card, err := loadCard(*prices)
				if err != nil {
					return err
				}
				if sh.sp.Sharded() {
					return costShard(e, fs, args, *from, *prices, card, opts, render, f, &sh, *out)
				}
				sessions, ws, err := usage.Load(e.ctx, args, *from, e.stdin)
				e.failed += ws.Failed()
				if err != nil {
					return err
				}
				return printCost(e, f, sessions, ws, card, opts)
			}
		},
	})
}

// printCost prices and groups sessions and prints the report, the
// warnings on stderr always (JSON on stdout stays clean) and in the JSON.
func printCost(e *env, f report.Format, sessions []usage.Session, ws *traces.Warnings, card *pricing.Card, opts usage.Options) error {
	rep := usage.CostOf(sessions, card, opts, ws)
	rep.Warnings = ws.List()
	printWarnings(e, ws)
	return report.WriteCost(e.stdout, f, rep, opts.Loc)
}

// costOptions checks the grouping flags.
func costOptions(r shard.CostRender) (usage.Options, error) {
	o, err := r.Options()
	if err != nil {
		return o, usagef("%v", err)
	}
	return o, nil
}

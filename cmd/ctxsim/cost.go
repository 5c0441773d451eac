package main

import (
	"errors"
	"io"

	// --timezone takes IANA names on machines without a zoneinfo database.
	_ "time/tzdata"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/usage"
)

func init() {
	register(&command{
		name:    "cost",
		summary: "what recorded sessions actually cost, by session, day, week, month, block, project or model",
		usage:   "[flags] PATH...",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var from, prices, out string
			addFrom(fs, &from)
			addPrices(fs, &prices)
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
			addShardOut(fs, &out)
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("want at least one PATH")
				}
				f, err := format.parse()
				if err != nil {
					return err
				}
				if err := sh.parse(out); err != nil {
					return err
				}
				if out != "" && !sh.sp.Sharded() {
					return usagef("--out is where a --shard writes its part; cost prints its report")
				}
				if from != "" {
					if _, err := traces.Lookup(formats.All(), from); err != nil {
						return err
					}
				}
				render := usage.Grouping{By: *by, Since: *since, Until: *until, Timezone: *tz, WeekStart: *weekStart}
				opts, err := render.Options()
				if err != nil {
					return err
				}
				card, err := runner.LoadPrices(prices)
				if err != nil {
					return err
				}
				if sh.sp.Sharded() {
					return costShard(e, fs, args, from, prices, card, opts, render, f, &sh, out)
				}
				sessions, ws, err := usage.Load(e.ctx, args, from, e.stdin)
				e.failed += ws.Failed()
				if err != nil {
					return err
				}
				return printCost(e, f, sessions, ws, card, opts)
			}
		},
	})
}

// printCost prices and groups sessions and prints the report
// (runner.Cost), the warnings on stderr always (JSON on stdout stays
// clean) and in the JSON.
func printCost(e *env, f report.Format, sessions []usage.Session, ws *traces.Warnings, card *pricing.Card, opts usage.Options) error {
	rep := runner.Cost(sessions, ws, card, opts)
	printWarnings(e, ws)
	if len(rep.Unpriced) > 0 {
		io.WriteString(e.stderr, "ctxsim cost: --prices FILE prices the models above (a LiteLLM model_prices_and_context_window.json)\n")
	}
	return report.WriteCost(e.stdout, f, rep, opts.Loc)
}

// costShard scans the project directories the shard owns
// (usage.ScanShard) and writes their sessions and warnings for merge; it
// prints the shard's own report.
func costShard(e *env, fs *pflag.FlagSet, paths []string, from, prices string, card *pricing.Card, opts usage.Options, render usage.Grouping, f report.Format, sh *shardFlags, out string) error {
	scan, err := usage.ScanShard(e.ctx, paths, from, e.stdin, sh.sp)
	var ns *usage.NotSplittableError
	if errors.As(err, &ns) {
		return usagef("cost --shard splits Claude Code log trees; %s is %s (run cost on it in one process)", ns.Path, ns.Format)
	} else if err != nil {
		return err
	}
	m, err := sh.manifest(fs, "cost", 0, paths, false, prices, render)
	if err != nil {
		return err
	}
	if err := printCost(e, f, scan.Sessions, scan.Warnings, card, opts); err != nil {
		return err
	}
	return sh.finish(out, m, scan.Walk, e.failed, scan.Entries, nil)
}

package main

import (
	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "breakeven",
		summary: "cache break-even figures and curves; would 1h have paid for my sessions?",
		usage:   "[flags] [PATH...]",
		help: `Breakeven answers two questions about prompt caching.

How many sends of a prefix pay for its cache write? Sending a prefix n
times costs n×input uncached, and write + (n−1)×read cached (rates in
multiples of the input rate). They break even at

  n* = (write − read) ÷ (1 − read)

sends, the writing one included: 1.28 for the 5m tier and 2.11 for the 1h
tier at Anthropic's 1.25× / 2× / 0.1×. So one reuse pays for a 5m write and
two pay for a 1h write.

When is the 1h tier cheaper than 5m? A gap of (5 min, 1 h] between calls
costs the 5m tier a rewrite that the 1h tier reads; every write costs the
1h tier its premium. With a share "long" of gaps over an hour and "growth"
new tokens per call (as a share of the prompt), 1h wins when the share of
gaps in (5 min, 1 h] exceeds

  (long + growth) × (w1h − w5m) ÷ (w5m − read)

Given recorded sessions (PATH: Claude Code logs or native traces, a file or
a directory), breakeven replays each one's call times and prompt sizes under
an all-5m and an all-1h cache and says which would have been cheaper and by
how much. Sessions with recorded usage are replayed as whatif replays them
(its ttl-5m and ttl-1h variants: subagents and the compaction agent on the
same provider, output included), so the verdict is whatif's; the gap columns
come from the recorded call times. Other sessions fall back to caching each
whole prompt and reading it back on the next call within the TTL; see
docs/metrics.md. With
--format csv and sessions, only the sessions table is written.

Examples:
  ctxsim breakeven
  ctxsim breakeven --model claude-opus-4-6 --json
  ctxsim breakeven --growth 0.02 --long 0.1
  ctxsim breakeven ~/.claude/projects
  ctxsim breakeven --plots figs/ --format markdown testdata/claude-code
  ctxsim breakeven --hindsight testdata/claude-code`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			model := fs.String("model", "claude-opus-4-6", "model whose rate card the break-even figures use")
			prices := fs.String("prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
			from := fs.String("from", "", "input format of PATHs: native or a registered importer (default: detect)")
			growth := fs.Float64("growth", 0.05, "new prompt tokens per call, as a share of the prompt, for the gap-mix threshold")
			long := fs.Float64("long", 0, "share of gaps over an hour, for the gap-mix threshold")
			plotDir := fs.String("plots", "", "write the break-even and idle-gap figures (SVG, PNG and data) to `DIR`")
			fs.StringVar(plotDir, "plot", "", "old name of --plots")
			_ = fs.MarkDeprecated("plot", "use --plots DIR, as every command spells it")
			hs := fs.Bool("hindsight", false, "also replay the sessions (recorded policy, Anthropic provider) and show what the cheapest cache schedule chose at each idle gap over 5 minutes: 1h, 5m or none")
			var format formatFlags
			format.add(fs, "same as --format json")
			return func(e *env, args []string) error {
				f, err := format.parse()
				if err != nil {
					return err
				}
				if *growth < 0 || *long < 0 || *long > 1 {
					return usagef("--growth must be ≥ 0 and --long in [0,1]")
				}
				card, err := loadCard(*prices)
				if err != nil {
					return err
				}
				p, err := card.Lookup(*model)
				if err != nil {
					return usagef("--model: %v", err)
				}
				rep, err := report.NewBreakevenReport(p, *growth, *long)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					l, err := load(e, harness.Workload{Paths: args, From: *from}) // warnings on stderr: JSON on stdout stays clean
					if err != nil {
						return err
					}
					rep.Warnings = l.Warnings.List()
					// Replayed as whatif replays them: the provider of each
					// session's model, no hindsight but the gaps'.
					sf := simFlags{prices: *prices, provider: "auto", seed: 1, jobs: 1, noHindsight: true}
					st, err := sf.setup(e)
					if err != nil {
						return err
					}
					if err := harness.Breakeven(e.ctx, st, rep, l.Sessions, p, *hs, runOptions(e, 1, shard.Spec{})); err != nil {
						return err
					}
				}
				if *plotDir != "" {
					figs, err := report.BreakevenFigures(p, *growth)
					if err != nil {
						return err
					}
					if err := report.WriteFigures(*plotDir, figs); err != nil {
						return err
					}
				}
				return rep.Write(e.stdout, f)
			}
		},
	})
}

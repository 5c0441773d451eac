package main

import (
	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
)

func init() {
	register(&command{
		name:    "breakeven",
		summary: "cache break-even figures and curves; would 1h have paid for my sessions?",
		usage:   "[flags] [PATH...]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			model := fs.String("model", "claude-opus-4-6", "model whose rate card the break-even figures use")
			var prices, from string
			addPrices(fs, &prices)
			addFrom(fs, &from)
			var growth, long float64
			fs.Var(numflag.Float(&growth, 0.05, numflag.NonNegative), "growth", "new prompt tokens per call, as a share of the prompt, for the gap-mix threshold")
			fs.Var(numflag.Float(&long, 0, numflag.Fraction), "long", "share of gaps over an hour, for the gap-mix threshold")
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
				card, err := runner.LoadPrices(prices)
				if err != nil {
					return err
				}
				p, err := card.Lookup(*model)
				if err != nil {
					return usagef("--model: %v", err)
				}
				rep, err := results.NewBreakevenReport(p, growth, long)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					// Replayed as whatif replays them: the provider of each
					// session's model, no hindsight but the gaps'. Set up
					// first, so the logs load through the import cache.
					sf := simFlags{Settings: runner.Settings{Prices: prices, Provider: "auto", Seed: 1, NoHindsight: true}}
					st, err := sf.setup(e)
					if err != nil {
						return err
					}
					l, err := load(e, runner.Workload{Paths: args, From: from}) // warnings on stderr: JSON on stdout stays clean
					if err != nil {
						return err
					}
					rep.Warnings = l.Warnings.List()
					if err := runner.Breakeven(e.ctx, st, rep, l.Sessions, p, *hs, runner.Console(e.stderr, 1, shard.Spec{})); err != nil {
						return err
					}
				}
				if *plotDir != "" {
					if err := report.WriteBreakevenFigures(*plotDir, p, growth); err != nil {
						return err
					}
				}
				return report.WriteBreakeven(e.stdout, f, rep)
			}
		},
	})
}

package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
)

func init() {
	register(&command{
		name:    "gen",
		summary: "generate synthetic sessions (seeded workload profiles)",
		usage:   "--profile P [--sessions N] [--seed S] -o DIR | --list",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			profile := fs.StringP("profile", "p", "", "workload profile (see --list)")
			var n int
			var length float64
			fs.VarP(numflag.Int(&n, 1, numflag.IntRange{Lo: 1, Hi: synth.MaxSessions}), "sessions", "n", "number of sessions")
			seed := fs.Uint64("seed", 1, "seed; one seed drives everything")
			out := fs.StringP("out", "o", "", "directory to write traces to (created if missing)")
			model := fs.String("model", "", "override the profile's model")
			fs.Var(numflag.Float(&length, 1, numflag.Range{Lo: 0, Hi: 100, OpenLo: true}), "length", "scale session length (turns; review: transcript tokens)")
			start := fs.String("start", "", "start time of session 0, RFC 3339 (default "+synth.DefaultStart.Format(time.RFC3339)+")")
			list := fs.Bool("list", false, "list profiles and exit")
			asJSON := fs.Bool("json", false, `print {"written":[...],"warnings":[]} (or the profile list) as JSON`)
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if *list {
					return report.WriteProfiles(e.stdout, *asJSON, synth.Profiles())
				}
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *profile == "" {
					return usagef("--profile is required (or --list)")
				}
				if _, ok := synth.Lookup(*profile); !ok {
					return usagef("--profile %q: unknown (ctxsim gen --list shows them)", *profile)
				}
				if *out == "" {
					return usagef("-o DIR is required")
				}
				opts := synth.Options{Model: *model, Length: length}
				if *start != "" {
					t, err := time.Parse(time.RFC3339, *start)
					if err != nil {
						return usagef("--start %q: want RFC 3339, like 2026-01-05T09:00:00Z", *start)
					}
					opts.Start = t.UTC()
				}
				ss, err := synth.Generate(e.ctx, *profile, n, *seed, opts)
				if err != nil {
					return err
				}
				return writeSessions(e, ss, *out, *asJSON, "", &traces.Warnings{})
			}
		},
	})
}

// writeSessions writes ss as native traces under dir (report.WriteNativeSet)
// and says what it wrote, with the warnings of the read that produced
// them; from names that read's format, empty for generated sessions.
func writeSessions(e *env, ss []*traces.Session, dir string, asJSON bool, from string, ws *traces.Warnings) error {
	out, err := report.WriteNativeSet(dir, ss)
	if err != nil {
		return err
	}
	printWarnings(e, ws) // stderr always: JSON on stdout stays clean
	return report.WriteWritten(e.stdout, asJSON, out, from, ws.List())
}

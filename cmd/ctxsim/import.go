package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

func lookupImporter(name string) (traces.Importer, error) {
	if im, err := traces.Lookup(formats.Logs(), name); err == nil {
		return im, nil
	}
	return nil, usagef("unknown format %q: want one of %s", name, strings.Join(formats.LogNames(), ", "))
}

func init() {
	register(&command{
		name:     "import",
		summary:  "convert agent logs (claude-code, ...) to native traces",
		usage:    "FORMAT PATH... -o DIR",
		helpTail: formats.LogsHelp,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			out := fs.StringP("out", "o", "", "directory to write native traces to (created if missing)")
			asJSON := fs.Bool("json", false, `print {"written":[...],"warnings":[...]} instead of text`)
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if len(args) < 2 {
					return usagef("want FORMAT and at least one PATH (formats: %s)", strings.Join(formats.LogNames(), ", "))
				}
				if *out == "" {
					return usagef("-o DIR is required")
				}
				im, err := lookupImporter(args[0])
				if err != nil {
					return err
				}
				return runImport(e, im, args[1:], *out, *asJSON)
			}
		},
	})
}

func runImport(e *env, im traces.Importer, paths []string, dir string, asJSON bool) error {
	all, ws, err := traces.ImportPaths(e.ctx, im, paths, e.stdin)
	if err != nil {
		return err
	}
	return writeSessions(e, all, dir, asJSON, im.Name(), ws)
}

// printWarnings prints the counted warnings of a read, one line a reason.
func printWarnings(e *env, ws *traces.Warnings) {
	fmt.Fprint(e.stderr, ws.String())
}

package formats

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
)

// Logs are the agent log formats: every format but the native one (what
// ctxsim import reads), in detection order.
func Logs() []traces.Importer {
	var out []traces.Importer
	for _, f := range All() {
		if f != traces.Native {
			out = append(out, f)
		}
	}
	return out
}

// LogNames are the Logs' names, sorted.
func LogNames() []string {
	var out []string
	for _, f := range Logs() {
		out = append(out, f.Name())
	}
	slices.Sort(out)
	return out
}

// LogsHelp lists the Logs, a name and summary a line, for --help texts.
func LogsHelp() string {
	var b strings.Builder
	b.WriteString("Formats:\n")
	for _, n := range LogNames() {
		im, _ := traces.Lookup(Logs(), n)
		fmt.Fprintf(&b, "  %-12s %s\n", n, im.Summary())
	}
	return b.String()
}

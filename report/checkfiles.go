package report

import (
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/traces"
)

// WriteFileChecks prints the verdicts of traces.CheckFiles (ctxsim
// validate): each problem as file:line: reason, or one OK line a good
// file with its session, events and calls; or as JSON,
// {"files":[...]}, a file without problems listing none ([]).
func WriteFileChecks(w io.Writer, asJSON bool, checks []traces.FileCheck) error {
	if asJSON {
		out := make([]traces.FileCheck, len(checks))
		for i, c := range checks {
			c.Problems = nonNil(c.Problems)
			out[i] = c
		}
		return WriteJSON(w, struct {
			Files []traces.FileCheck `json:"files"`
		}{out})
	}
	for _, v := range checks {
		if !v.OK {
			for _, p := range v.Problems {
				fmt.Fprintln(w, safetext.Line(p))
			}
			continue
		}
		fmt.Fprintf(w, "%s: OK: session %s, %d events, %d calls (%d with usage)\n", safetext.Line(v.File), safetext.Line(v.Session), v.Events, v.Calls, v.BilledCalls)
	}
	return nil
}

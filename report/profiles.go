package report

import (
	"io"
	"slices"

	"github.com/ctxsim/ctxsim/traces/synth"
)

// WriteProfiles lists synthetic workload profiles (ctxsim gen --list): a
// table of each one's name and description, or the profiles as JSON. A
// description's inputs in braces read as w names them (Output.Name).
func WriteProfiles(w io.Writer, asJSON bool, ps []synth.Profile) error {
	ps = slices.Clone(ps)
	for i := range ps {
		ps[i].Description = note(w, ps[i].Description)
	}
	if asJSON {
		return WriteJSON(w, ps)
	}
	t := &Table{Columns: []string{"profile", "description"}}
	for _, p := range ps {
		t.AddRow(p.Name, p.Description)
	}
	return t.Write(w, Text)
}

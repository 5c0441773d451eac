package report

import (
	"io"

	"github.com/ctxsim/ctxsim/traces/synth"
)

// WriteProfiles lists synthetic workload profiles (ctxsim gen --list): a
// table of each one's name and description, or the profiles as JSON.
func WriteProfiles(w io.Writer, asJSON bool, ps []synth.Profile) error {
	if asJSON {
		return WriteJSON(w, ps)
	}
	t := &Table{Columns: []string{"profile", "description"}}
	for _, p := range ps {
		t.AddRow(p.Name, p.Description)
	}
	return t.Write(w, Text)
}

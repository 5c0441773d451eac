package report

import (
	"io"
	"strings"

	"github.com/ctxsim/ctxsim/policies"
)

// WritePresets lists the preset policies with the settings in which each
// differs from hermes-agent's defaults (ctxsim policies).
func WritePresets(w io.Writer, f Format) error {
	base := policies.Default()
	type row struct {
		Name        string             `json:"name"`
		Description string             `json:"description"`
		Changes     []policies.Setting `json:"changes"`
	}
	var rows []row
	t := Table{Title: "Preset policies (changes from hermes-agent's defaults)", Columns: []string{"preset", "changes", "description"}}
	for _, c := range policies.Presets() {
		d := c.Diff(&base)
		rows = append(rows, row{c.Name, c.Description, append([]policies.Setting{}, d...)})
		parts := make([]string, len(d))
		for i, s := range d {
			parts[i] = s.Key + "=" + s.Value
		}
		changes := strings.Join(parts, " ")
		if changes == "" {
			changes = "-"
		}
		t.AddRow(c.Name, changes, c.Description)
	}
	if f == JSON {
		return WriteJSON(w, rows)
	}
	t.Notes = []string{
		`"ctxsim policies NAME" prints every setting of one preset.`,
		`Also: "recorded" replays what a recorded log shows (run, compare, whatif); whatif adds variants of it (ctxsim whatif {help}).`,
	}
	return t.Write(w, f)
}

// WritePolicy lists every setting of c.
func WritePolicy(w io.Writer, f Format, c *policies.Config) error {
	if f == JSON {
		return WriteJSON(w, struct {
			Name     string             `json:"name"`
			Settings []policies.Setting `json:"settings"`
		}{c.Name, c.Settings()})
	}
	t := Table{Title: "Policy " + c.Name, Columns: []string{"key", "value"}}
	for _, s := range c.Settings() {
		t.AddRow(s.Key, s.Value)
	}
	if c.Description != "" {
		t.Notes = []string{c.Description}
	}
	return t.Write(w, f)
}

// WritePolicyKeys lists every policy key with its default, allowed values
// and meaning.
func WritePolicyKeys(w io.Writer, f Format) error {
	type row struct {
		Key     string `json:"key"`
		Allowed string `json:"allowed"`
		Default string `json:"default"`
		Help    string `json:"help"`
	}
	base := policies.Default()
	var rows []row
	t := Table{Title: "Policy keys", Columns: []string{"key", "default", "allowed", "meaning"}}
	for _, k := range policies.Keys() {
		d, _ := base.Get(k.Name)
		rows = append(rows, row{k.Name, k.Allowed, d, k.Help})
		t.AddRow(k.Name, d, k.Allowed, k.Help)
	}
	t.AddRow("compression.model_thresholds.<model>", "-", "a number in (0, 1]", "per-model threshold; longest matching substring wins")
	rows = append(rows, row{"compression.model_thresholds.<model>", "a number in (0, 1]", "", "per-model threshold; longest matching substring wins"})
	if f == JSON {
		return WriteJSON(w, rows)
	}
	return t.Write(w, f)
}

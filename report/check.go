package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/results"
)

// checkFormats show each check metric's values (results.CheckMetrics).
var checkFormats = map[string]func(float64) string{
	"cache_hit_rate": pctSign,
	"cost":           func(v float64) string { return "$" + usd(v) },
	"occupancy_max":  pctSign,
	"compactions":    plain,
	"latency_p95":    func(v float64) string { return plain(v) + " ms" },
}

func pctSign(v float64) string { return pct(v) + "%" }
func plain(v float64) string   { return strconv.FormatFloat(v, 'f', -1, 64) }

// CheckTable renders the report benchstat-style: one row per cell and metric.
func CheckTable(r *results.CheckReport) *Table {
	t := &Table{
		Columns: []string{"cell", "metric", "old", "new", "delta", "verdict"},
		Right:   []bool{false, false, true, true, true, false},
	}
	for _, row := range r.Rows {
		cell := row.Trace + " · " + row.Policy
		switch row.Verdict {
		case results.Missing:
			t.AddRow(cell, "", "", "", "", "missing: in the baseline, not in the results")
			continue
		case results.New:
			t.AddRow(cell, "", "", "", "", "new: not in the baseline")
			continue
		}
		m := results.FindMetric(row.Metric)
		format := checkFormats[row.Metric]
		tol := r.Tolerances[row.Metric]
		verdict := string(row.Verdict)
		if row.Verdict == results.Same {
			verdict = "~ (within " + tolString(*m, tol) + ")"
		}
		t.AddRow(cell, row.Metric, format(row.Old), format(row.New), row.Delta, verdict)
	}
	t.Notes = append(t.Notes, r.Summary())
	return t
}

func tolString(m results.CheckMetric, t results.Tolerance) string {
	if t.Kind == results.PP {
		return strconv.FormatFloat(t.Value*100, 'g', -1, 64) + "pp"
	}
	return t.String()
}

// WriteCheck renders the report in format f.
func WriteCheck(w io.Writer, f Format, r *results.CheckReport) error {
	if f == JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if len(r.Rows) == 0 && f == Text {
		// Nothing to show (--changed with nothing changed): the summary
		// line alone, not an empty table.
		_, err := fmt.Fprintln(w, r.Summary())
		return err
	}
	return CheckTable(r).Write(w, f)
}

// WriteCheckMarkdown writes the report for a CI job summary
// ($GITHUB_STEP_SUMMARY): a headline, the failures, then only the rows that
// changed (the full table folded away).
func WriteCheckMarkdown(w io.Writer, r *results.CheckReport) error {
	var b strings.Builder
	head := "✅ ctxsim check passed"
	if r.Failed() {
		head = "❌ ctxsim check failed"
	}
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", head, r.Summary())
	changed := r.Changed()
	if len(changed.Rows) > 0 {
		t := CheckTable(changed)
		t.Notes = nil
		if err := t.Write(&b, Markdown); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	b.WriteString("<details><summary>All metrics</summary>\n\n")
	t := CheckTable(r)
	t.Notes = nil
	if err := t.Write(&b, Markdown); err != nil {
		return err
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot/plotter"

	"github.com/ctxsim/ctxsim/results"
)

// TuneHeadline is a tune's answer in words: the recommendation, its
// held-out saving with the spread over folds, what choosing on the same
// sessions would have claimed, and the constraints.
func TuneHeadline(t *results.Tune) []string {
	var out []string
	out = append(out, fmt.Sprintf("Tune of %s over %s: %d settings, %d session groups in %d folds (seed %d)",
		t.Base, AxisNames(t.Axes), len(t.Candidates), t.Sessions, t.Folds, t.Seed))
	if t.Recommended == "" {
		out = append(out, "Recommended: none (the settings table says what rules each out)")
	}
	for _, s := range t.Settings {
		if s.Name != t.Recommended {
			continue
		}
		l := fmt.Sprintf("Recommended: %s (chosen on the training sessions of %d of %d folds", t.Recommended, s.ChosenBy, t.Folds)
		if s.HeldOutPct != nil && s.Name != t.Current {
			l += fmt.Sprintf("; it saved %.1f%% on those folds' own sessions", *s.HeldOutPct)
		}
		out = append(out, l+")")
	}
	h := t.HeldOut
	out = append(out, fmt.Sprintf("Held-out saving: %.1f%% of %s's cost (per fold: mean %.1f%%, min %.1f%%, max %.1f%%, sd %.1f pp)",
		h.SavingPct, t.Current, h.MeanPct, h.MinPct, h.MaxPct, h.SDPct))
	if t.InSample.Chosen != "" {
		verb := "overstates"
		if t.OptimismPP < 0 {
			verb = "understates"
		}
		if t.OptimismPP == 0 {
			out = append(out, fmt.Sprintf("Chosen and measured on all sessions: %.1f%% (%s), the same as held out", t.InSample.SavingPct, t.InSample.Chosen))
		} else {
			out = append(out, fmt.Sprintf("Chosen and measured on all sessions: %.1f%% (%s), which %s the held-out saving by %.1f pp",
				t.InSample.SavingPct, t.InSample.Chosen, verb, abs(t.OptimismPP)))
		}
	}
	if len(t.Keep) > 0 {
		ks := make([]string, len(t.Keep))
		for i, k := range t.Keep {
			ks[i] = k.String()
		}
		out = append(out, "Kept on every fold: "+strings.Join(ks, ", "))
	}
	return append(out, t.Notes...)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TuneFoldTable is one row per fold: its sessions, the setting its
// training folds chose, and that setting's saving on them, on the fold,
// and what choosing on the fold itself would have claimed.
func TuneFoldTable(t *results.Tune) *Table {
	tb := &Table{Title: "Folds (each chooses on the other folds' sessions, measures on its own)",
		Columns: []string{"fold", "sessions", "chosen on the other folds", "training saving %", "held-out saving %", "same-sessions saving %", "broke"},
		Right:   []bool{true, true, false, true, true, true, false}, Drop: []int{0, 0, 0, 0, 0, 1, 2}}
	for _, f := range t.FoldList {
		tb.AddRow(strconv.Itoa(f.Fold), strconv.Itoa(len(f.Sessions)), f.Chosen, signedPct(f.TrainPct), signedPct(f.HeldOutPct), signedPct(f.SameSavingPct), strings.Join(f.Broken, "; "))
	}
	return tb
}

// TuneSettingsTable is one row per setting over all sessions: cost, saving
// against the current setting, the front metrics, the folds that chose it
// and what rules it out. * marks the recommendation, = the current setting.
func TuneSettingsTable(t *results.Tune) *Table {
	tb := &Table{Title: "Settings over all sessions (* recommended, = current)", Columns: []string{"setting", "cost $", "saving %"}, Right: []bool{false, true, true}}
	fronts := t.FrontMetrics()
	for _, m := range fronts {
		tb.Columns = append(tb.Columns, m.Metric)
		tb.Right = append(tb.Right, true)
	}
	tb.Columns = append(tb.Columns, "chosen by", "held-out saving %", "ruled out by")
	tb.Right = append(tb.Right, true, true, false)
	tb.Drop = make([]int, len(tb.Columns))
	tb.Drop[len(tb.Drop)-1] = 1
	for _, s := range t.Settings {
		row := []string{s.Name + tuneMark(t, s.Name), usd(s.CostUSD), signedPct(s.SavingPct)}
		for _, m := range fronts {
			row = append(row, metricCell(m.Metric, s.Metric(m.Metric)))
		}
		held := ""
		if s.HeldOutPct != nil {
			held = signedPct(*s.HeldOutPct)
		}
		row = append(row, fmt.Sprintf("%d/%d", s.ChosenBy, t.Folds), held, strings.Join(s.Broken, "; "))
		tb.AddRow(row...)
	}
	return tb
}

func tuneMark(t *results.Tune, name string) string {
	var m string
	if name == t.Recommended {
		m += " *"
	}
	if name == t.Current {
		m += " ="
	}
	return m
}

func metricCell(name string, v *float64) string {
	if v == nil {
		return "n/a"
	}
	return results.MetricText(name, *v)
}

// TuneFrontTable is the Pareto front of cost against one metric: the
// settings no other beats on both, cheapest first.
func TuneFrontTable(t *results.Tune, f results.Front) *Table {
	dir := "lower is better"
	if f.HigherIsBetter {
		dir = "higher is better"
	}
	tb := &Table{Title: fmt.Sprintf("Pareto front: cost against %s (%s)", f.Metric, dir), Columns: []string{"setting", "cost $", f.Metric, "ruled out"},
		Right: []bool{false, true, true, false}}
	out := map[string]bool{}
	for _, s := range t.Settings {
		out[s.Name] = !s.Eligible
	}
	for _, p := range frontPoints(f) {
		ruled := ""
		if out[p.Name] {
			ruled = "yes"
		}
		tb.AddRow(p.Name+tuneMark(t, p.Name), usd(p.CostUSD), results.MetricText(f.Metric, p.Value), ruled)
	}
	return tb
}

// frontPoints are f's points on the front, cheapest first.
func frontPoints(f results.Front) []results.FrontPoint {
	var out []results.FrontPoint
	for _, p := range f.Points {
		if p.OnFront {
			out = append(out, p)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort: stable, a handful of points
		for j := i; j > 0 && out[j].CostUSD < out[j-1].CostUSD; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// WriteTune prints a tune in f: JSON is the results.Tune; CSV the
// settings table; text and Markdown the headline, the folds, the settings
// and each Pareto front.
func WriteTune(w io.Writer, f Format, t *results.Tune) error {
	switch f {
	case JSON:
		return WriteJSON(w, t)
	case CSV:
		return TuneSettingsTable(t).Write(w, f)
	}
	for _, l := range TuneHeadline(t) {
		if f == Markdown {
			l = mdEscape(l) + "  "
		}
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	tables := []*Table{TuneFoldTable(t), TuneSettingsTable(t)}
	for _, fr := range t.Fronts {
		tables = append(tables, TuneFrontTable(t, fr))
	}
	for _, tb := range tables {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if err := tb.Write(w, f); err != nil {
			return err
		}
	}
	return nil
}

// TuneFigures are one small plot per front: every setting's cost against
// the metric, the front joined by a line, the recommended and the current
// setting marked.
func TuneFigures(t *results.Tune) []Figure {
	var figs []Figure
	for _, f := range t.Fronts {
		scale := 1.0
		unit := ""
		if m := results.FindTuneMetric(f.Metric); m != nil && m.Fraction {
			scale, unit = 100, " (%)"
		}
		fig := Figure{Name: "tune-front-" + fileSafe(f.Metric), Title: "cost against " + f.Metric, XLabel: f.Metric + unit, YLabel: "cost over all sessions ($)", MarkLegend: "recommended, current"}
		var all, front plotter.XYs
		for _, p := range f.Points {
			all = append(all, plotter.XY{X: p.Value * scale, Y: p.CostUSD})
		}
		for _, p := range frontPoints(f) {
			front = append(front, plotter.XY{X: p.Value * scale, Y: p.CostUSD})
		}
		fig.Series = []Series{{Name: "Pareto front", Points: front}}
		fig.Dots = []Series{{Name: "settings", Points: all}}
		for _, p := range f.Points {
			switch {
			case p.Name == t.Recommended && p.Name == t.Current:
				fig.Marks = append(fig.Marks, Mark{Label: "recommended = current", X: p.Value * scale, Y: p.CostUSD})
			case p.Name == t.Recommended:
				fig.Marks = append(fig.Marks, Mark{Label: "recommended", X: p.Value * scale, Y: p.CostUSD})
			case p.Name == t.Current:
				fig.Marks = append(fig.Marks, Mark{Label: "current", X: p.Value * scale, Y: p.CostUSD})
			}
		}
		figs = append(figs, fig)
	}
	return figs
}

//go:embed tune.html.tmpl
var tuneTemplate string

// tuneTmpl is the tune page, with the report's templates (its "table").
var tuneTmpl = sync.OnceValue(func() *template.Template {
	t := template.Must(template.New("report").Funcs(template.FuncMap{"mul100": func(f float64) float64 { return f * 100 }}).Parse(htmlTemplate))
	return template.Must(t.New("tune").Parse(tuneTemplate))
})

type tunePage struct {
	Title    string
	Headline []string
	Figures  []htmlFigure
	Tables   []*Table
}

// WriteTuneHTML writes a tune's report as one self-contained HTML page:
// the answer first (TuneHeadline), then one small Pareto plot per front
// metric (TuneFigures), then the folds, settings and fronts tables. No
// scripts, nothing from the network.
func WriteTuneHTML(w io.Writer, t *results.Tune) error {
	page := tunePage{Title: "ctxsim tune: " + t.Base, Headline: TuneHeadline(t), Tables: []*Table{TuneFoldTable(t), TuneSettingsTable(t)}}
	for _, fr := range t.Fronts {
		page.Tables = append(page.Tables, TuneFrontTable(t, fr))
	}
	for _, f := range TuneFigures(t) {
		svg, err := inlineSVG(f)
		if err != nil {
			return err
		}
		page.Figures = append(page.Figures, htmlFigure{Title: f.Title, SVG: svg})
	}
	var b bytes.Buffer
	if err := tuneTmpl().ExecuteTemplate(&b, "tune", page); err != nil {
		return fmt.Errorf("report: tune html: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

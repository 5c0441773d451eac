package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
)

// HTMLInput is what WriteHTML renders.
type HTMLInput struct {
	// Title heads the page; empty means "ctxsim report".
	Title string
	// Subtitle is a line under the title (the command that made it, the
	// seed). The report never reads the clock, so any date is the caller's.
	Subtitle string
	Runs     []RunSummary
	// Records feed the per-trace figures and the per-session drill-down.
	Records []sim.Record
	// Price, when set, adds the break-even and idle-gap figures for it.
	Price *pricing.Price
	// Figures are extra figures (a sweep heatmap), drawn after the others.
	Figures []Figure
}

//go:embed report.html.tmpl
var htmlTemplate string

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"mul100": func(f float64) float64 { return f * 100 },
}).Parse(htmlTemplate))

type htmlFigure struct {
	Title string
	SVG   template.HTML
}

type htmlRun struct {
	Trace, Policy string
	Summary       RunSummary
	Metrics       [][2]string
	Damage        *Table
	Misses        *Table
	Rows          []htmlRow
}

type htmlRow struct {
	Pass                                                bool
	Seq, Time, Kind, Prompt, Read, Write, Input, Output string
	Cost, Hit, Latency, Note                            string
}

type htmlPage struct {
	Title, Subtitle string
	Summary         *Table
	Figures         []htmlFigure
	Runs            []htmlRun
}

// WriteHTML writes one self-contained HTML page: the compare table, the
// figures as inline SVG, and a collapsible per-run drill-down with every
// call. It loads nothing from the network and needs no JavaScript.
func WriteHTML(w io.Writer, in HTMLInput) error {
	page := htmlPage{Title: cmp.Or(in.Title, "ctxsim report"), Subtitle: in.Subtitle, Summary: RunsTable(in.Runs, RunsOptions{})}
	figs, err := reportFigures(in)
	if err != nil {
		return err
	}
	for _, f := range figs {
		svg, err := inlineSVG(f)
		if err != nil {
			return err
		}
		page.Figures = append(page.Figures, htmlFigure{Title: f.Title, SVG: svg})
	}
	for _, r := range in.Runs {
		page.Runs = append(page.Runs, drillDown(r, in.Records))
	}
	var b bytes.Buffer
	if err := htmlTmpl.Execute(&b, page); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

func reportFigures(in HTMLInput) ([]Figure, error) {
	figs := RunFigures(in.Records)
	if in.Price != nil {
		be, err := BreakevenFigure(*in.Price, 6)
		if err != nil {
			return nil, err
		}
		figs = append(figs, be)
		if in.Price.CacheWrite1h > 0 {
			gap, err := GapCostFigure(*in.Price, 0.05, 90*time.Minute)
			if err != nil {
				return nil, err
			}
			figs = append(figs, gap)
		}
	}
	return append(figs, in.Figures...), nil
}

// inlineSVG renders f and drops the XML prologue so the <svg> element can
// sit inside HTML.
func inlineSVG(f Figure) (template.HTML, error) {
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: figure %s rendered no <svg> element", f.Name)
	}
	// Our own renderer's output, not user input: safe to inline as is.
	return template.HTML(s[i:]), nil
}

func drillDown(s RunSummary, recs []sim.Record) htmlRun {
	hr := htmlRun{Trace: s.Trace, Policy: s.Policy, Summary: s}
	hr.Metrics = [][2]string{
		{"requests", strconv.Itoa(s.Requests)},
		{"cost", "$" + usd(s.CostUSD)},
		{"cache hit rate (tokens / requests)", pct(s.CacheHitRate) + "% / " + pct(s.RequestHitRate) + "%"},
		{"lost to misses", "$" + usd(s.MissCostUSD)},
		{"summarizer cost", "$" + usd(s.SummarizerCostUSD)},
		{"turn latency p50 / p95 / max", fmt.Sprintf("%d / %d / %d ms", s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.Max)},
		{"stall", fmt.Sprintf("%d ms", s.StallMS)},
		{"occupancy mean / max / final", pct(s.Occupancy.Mean) + "% / " + pct(s.Occupancy.Max) + "% / " + pct(s.Occupancy.Final) + "%"},
		{"compactions batch / micro / prune / idle / masking", fmt.Sprintf("%d / %d / %d / %d / %d",
			s.Compactions.Batch, s.Compactions.Micro, s.Compactions.Prune, s.Compactions.Idle, s.Compactions.Masking)},
		{"tokens shed", strconv.FormatInt(s.TokensShed, 10)},
		{"breaker trips / overflow errors", fmt.Sprintf("%d / %d", s.BreakerTrips, s.OverflowErrors)},
	}
	if h := s.Hindsight; h != nil {
		v := fmt.Sprintf("$%s / $%s (%.1f%%)", usd(h.CostUSD), usd(h.RegretUSD), h.RegretPct)
		if !h.Exact {
			v += ", not proven optimal"
		}
		hr.Metrics = append(hr.Metrics, [2]string{"hindsight optimum / regret", v})
	}
	if s.UserMessagesVerbatim != nil {
		hr.Metrics = append(hr.Metrics, [2]string{"user messages verbatim", pct(*s.UserMessagesVerbatim) + "%"})
	}
	if s.Recorded != nil {
		hr.Metrics = append(hr.Metrics,
			[2]string{"recorded cost", "$" + usd(s.Recorded.CostUSD)},
			[2]string{"error cost / read / write", fmt.Sprintf("%s%% / %s%% / %s%%", signed(s.Error.CostPct), signed(s.Error.CacheReadPct), signed(s.Error.CacheWritePct))})
	}
	if len(s.CacheDamage) > 0 {
		hr.Damage = DamageTable(s.CacheDamage)
	}
	if len(s.Misses) > 0 {
		hr.Misses = MissTable(s.Misses)
	}
	var rs []sim.Record
	for _, r := range recs {
		if r.Trace == s.Trace && r.Policy == s.Policy {
			rs = append(rs, r)
		}
	}
	slices.SortStableFunc(rs, func(a, b sim.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	var start time.Time
	if len(rs) > 0 {
		start = rs[0].Time
	}
	for _, r := range rs {
		row := htmlRow{
			Pass: r.Kind != sim.KindCall, Seq: strconv.Itoa(r.Seq), Time: offset(r.Time.Sub(start)), Kind: string(r.Kind),
			Prompt: strconv.Itoa(r.Prompt), Read: i64(r.Usage.CacheRead), Write: i64(r.Usage.Writes()),
			Input: i64(r.Usage.Input), Output: i64(r.Usage.Output), Cost: usd(r.CostUSD),
			Latency: strconv.FormatInt(r.LatencyMS+r.StallMS, 10),
		}
		if r.Kind == sim.KindCall {
			row.Hit = pct(r.Usage.HitRate())
		} else {
			row.Prompt = ""
			if r.TokensBefore > 0 || r.TokensAfter > 0 {
				row.Note = fmt.Sprintf("%d → %d tokens", r.TokensBefore, r.TokensAfter)
			}
			if r.Outcome != "" {
				row.Note = strings.TrimSpace(row.Note + " " + r.Outcome)
			}
		}
		if r.Error != "" {
			row.Note = r.Error
		}
		hr.Rows = append(hr.Rows, row)
	}
	return hr
}

// MissTable is a run's cache misses by cause: calls, tokens not read, and
// what re-sending them cost beyond reading them.
func MissTable(ms []MissStat) *Table {
	t := &Table{Columns: []string{"cause", "calls", "tokens re-sent", "extra $"}, Right: []bool{false, true, true, true}}
	for _, m := range ms {
		t.AddRow(m.Reason, strconv.Itoa(m.Calls), strconv.FormatInt(m.Tokens, 10), usd(m.CostUSD))
	}
	return t
}

// DamageTable lists the cache damage of each compaction.
func DamageTable(ds []Damage) *Table {
	t := &Table{
		Columns: []string{"seq", "kind", "turn", "tokens shed", "calls", "baseline write", "extra write", "extra $", "saving $/call", "payback calls"},
		Right:   []bool{true, false, true, true, true, true, true, true, true, true},
	}
	for _, d := range ds {
		t.AddRow(strconv.Itoa(d.Seq), d.Kind, strconv.Itoa(d.Turn), i64(d.TokensShed), strconv.Itoa(d.Calls),
			strconv.FormatFloat(d.BaselineWrite, 'f', 0, 64), i64(d.ExtraWriteTokens), usd(d.ExtraWriteUSD),
			usd(d.ReadSavingUSD), strconv.FormatFloat(d.PaybackCalls, 'f', 1, 64))
	}
	return t
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// offset formats a duration since the run's first record as h:mm:ss.
func offset(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// WriteDir writes a comparison's outputs to dir (created if missing), each
// atomically: records.jsonl, summary.json and report.html. The report's
// break-even figures use the price on prices of the first call's model.
func WriteDir(dir string, in HTMLInput, prices *pricing.Card) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, "records.jsonl"), func(w io.Writer) error { return WriteRecords(w, in.Records) }); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, "summary.json"), func(w io.Writer) error {
		return WriteResults(w, Results{Runs: in.Runs})
	}); err != nil {
		return err
	}
	for _, r := range in.Records {
		if r.Kind == sim.KindCall && r.Model != "" {
			if p, err := prices.Lookup(r.Model); err == nil {
				in.Price = &p
			}
			break
		}
	}
	return WriteFileAtomic(filepath.Join(dir, "report.html"), func(w io.Writer) error { return WriteHTML(w, in) })
}

package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// HTMLInput is what WriteHTML renders.
type HTMLInput struct {
	// Title heads the page; empty means "ctxsim report".
	Title string
	// Subtitle is a line under the title (the command that made it, the
	// seed). The report never reads the clock, so any date is the caller's.
	Subtitle string
	Runs     []results.RunSummary
	// Records feed the per-trace figures and the per-session drill-down.
	Records []sim.Record
	// Price, when set, adds the break-even and idle-gap figures for it.
	Price *pricing.Price
	// Figures are extra figures (a sweep heatmap), drawn after the others.
	Figures []Figure
	// Warnings are the input's warnings, for summary.json.
	Warnings []traces.Warning
	// Workloads names the workload of each trace (a synthetic profile, "claude-code
	// logs"); a trace not in it is its own workload.
	Workloads map[string]string
}

//go:embed report.html.tmpl
var htmlTemplate string

// htmlTmpl is parsed at the first report, not at start-up: every command
// links this package, few write HTML.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"mul100": func(f float64) float64 { return f * 100 },
	}).Parse(htmlTemplate))
})

type htmlFigure struct {
	Title string
	SVG   template.HTML
}

type htmlRun struct {
	Trace, Policy string
	Summary       results.RunSummary
	Metrics       [][2]string
	Damage        *Table
	Misses        *Table
}

type htmlPage struct {
	Title, Subtitle string
	Overview        overview
	Workloads       []ovWorkload
	Summary         *Table
	Figures         []htmlFigure
	Runs            []htmlRun
}

// WriteHTML writes one self-contained HTML page that answers its questions
// before it shows its data: an overview (which policy is cheapest per
// workload and by how much, what each policy saves, which cache breaks cost
// the most), then a section per workload with small multiples (one panel
// per policy: hit rate and occupancy per call, on shared scales) and cost
// bars, then the break-even and extra figures, and the tables last: every
// run, and a collapsible drill-down per run (its metrics, compactions and
// cache misses; every call is in records.jsonl). A policy has one colour
// in every chart; a run whose calls overflowed the window carries an
// "overflow" badge and is never the cheapest. It loads nothing from the
// network and needs no JavaScript.
func WriteHTML(w io.Writer, in HTMLInput) error {
	colors := policyColors(in.Runs)
	page := htmlPage{Title: cmp.Or(in.Title, "ctxsim report"), Subtitle: in.Subtitle, Summary: RunsTable(in.Runs, RunsOptions{}),
		Overview: buildOverview(in, colors), Workloads: buildWorkloads(in, colors)}
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
		page.Runs = append(page.Runs, drillDown(r))
	}
	var b bytes.Buffer
	if err := htmlTmpl().Execute(&b, page); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// reportFigures is the page's gonum figures: break-even and idle-gap cost
// for the price, then the caller's. The per-run figures are the small
// multiples now; --plots still writes them as files.
func reportFigures(in HTMLInput) ([]Figure, error) {
	var figs []Figure
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

func drillDown(s results.RunSummary) htmlRun {
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
	return hr
}

// MissTable is a run's cache misses by cause: calls, tokens not read, and
// what re-sending them cost beyond reading them.
func MissTable(ms []results.MissStat) *Table {
	t := &Table{Columns: []string{"cause", "calls", "tokens re-sent", "extra $"}, Right: []bool{false, true, true, true}}
	for _, m := range ms {
		t.AddRow(m.Reason, strconv.Itoa(m.Calls), strconv.FormatInt(m.Tokens, 10), usd(m.CostUSD))
	}
	return t
}

// DamageTable lists the cache damage of each compaction.
func DamageTable(ds []results.Damage) *Table {
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

// A SetFile is one file of an output set (WriteDir): its name and what
// to write to it.
type SetFile = atomicfile.SetFile

// WriteDir writes a comparison's outputs to dir (created if missing) as
// one set: records.jsonl, summary.json, report.html and the extra files
// (runs.parquet, ...), all written or none: a report that fails to render
// must not leave new records beside an old report.
func WriteDir(dir string, in HTMLInput, extra ...SetFile) error {
	return atomicfile.WriteSet(dir, append([]SetFile{
		{Name: "records.jsonl", Write: func(w io.Writer) error { return WriteRecords(w, in.Records) }},
		{Name: "summary.json", Write: func(w io.Writer) error {
			return WriteSummary(w, results.Summary{Runs: in.Runs, Warnings: in.Warnings})
		}},
		{Name: "report.html", Write: func(w io.Writer) error { return WriteHTML(w, in) }},
	}, extra...))
}

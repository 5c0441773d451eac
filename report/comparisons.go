package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// Tables of comparisons, for the CLI and any program: the workload view of
// a comparison, a sweep's cost matrix and heatmaps, and one run's bill.

// WorkloadTable is the ten-second view of a comparison: one row per policy,
// one column per workload holding the policy's cost summed over the
// workload's sessions, the cheapest of each column marked "*". A run with
// overflowed or failed calls ("!") is never the cheapest: its rejected calls
// cost nothing. The last rows say how much the best saves against the first
// comparable policy of the column, and the best's cache hit rate.
func WorkloadTable(runs []results.RunSummary, workloads map[string]string, policies []string) *Table {
	pv := results.NewPivot(runs,
		func(r results.RunSummary) string { return r.Policy },
		func(r results.RunSummary) string { return workloads[r.Trace] })
	t := &Table{
		Title:   "Cost in $ per policy and workload (summed over the workload's sessions; * cheapest)",
		Columns: []string{"policy"},
		Right:   []bool{false},
	}
	failed := false
	for _, w := range pv.Cols {
		n := 0
		for _, p := range pv.Rows {
			if a := pv.At(p, w); a != nil {
				n = max(n, a.Runs)
				failed = failed || a.Failed > 0
			}
		}
		t.Columns = append(t.Columns, fmt.Sprintf("%s (%d)", w, n))
		t.Right = append(t.Right, true)
	}
	for _, p := range policies {
		row := []string{p}
		for _, w := range pv.Cols {
			a := pv.At(p, w)
			switch {
			case a == nil:
				row = append(row, "")
			case p == pv.BestIn(w, policies):
				row = append(row, usd2(a.CostUSD)+" *")
			case !a.Comparable():
				row = append(row, usd2(a.CostUSD)+" !")
			default:
				row = append(row, usd2(a.CostUSD)+"  ")
			}
		}
		t.AddRow(row...)
	}
	saves, hits := []string{"best saves %"}, []string{"best hit %"}
	for _, w := range pv.Cols {
		b, z := pv.At(pv.BestIn(w, policies), w), pv.At(pv.FirstComparable(w, policies), w)
		s, h := "", ""
		if b != nil && z != nil && z.CostUSD > 0 {
			s = pct1(1-b.CostUSD/z.CostUSD) + "  "
		}
		if b != nil && b.Prompt > 0 {
			h = pct1(float64(b.CacheRead)/float64(b.Prompt)) + "  "
		}
		saves, hits = append(saves, s), append(hits, h)
	}
	t.AddRow(saves...)
	t.AddRow(hits...)
	t.Notes = []string{
		"Columns: workloads (synthetic profiles, recorded logs) with their session counts.",
		"! some calls overflowed the context window (rejected, so unbilled): not comparable, never the best.",
		"best saves %: against the first policy of the column, in row order, whose calls all fit.",
		"Per-session rows: ctxsim compare {detail}; one workload: {profile} P or {trace} PATH.",
	}
	if failed {
		t.Notes[1] = "! some calls overflowed the context window or failed (rejected, so unbilled): not comparable, never the best."
	}
	return t
}

// A Matrix is a two-key sweep's totals: rows the first key's values,
// columns the second's, summed over the traces by one Pivot.
type Matrix struct {
	axes   [2]results.Axis
	pivot  *results.Pivot
	traces int
}

// countNoun is "1 trace", "2 traces".
func countNoun(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// NewMatrix sums runs into rows × cols; cell names the (row value, column
// value) of a run.
func NewMatrix(rows, cols results.Axis, runs []results.RunSummary, cell func(results.RunSummary) (row, col string)) *Matrix {
	m := &Matrix{axes: [2]results.Axis{rows, cols}}
	m.pivot = results.NewPivot(runs,
		func(r results.RunSummary) string { row, _ := cell(r); return row },
		func(r results.RunSummary) string { _, col := cell(r); return col })
	seen := map[string]bool{}
	for _, r := range runs {
		seen[r.Trace] = true
	}
	m.traces = len(seen)
	return m
}

// Table is the cost matrix, the cheapest comparable cell marked: a cell
// some of whose calls overflowed or failed is never the cheapest (its
// rejected calls cost nothing), and is marked "!".
func (m *Matrix) Table() *Table {
	t := &Table{
		Title:   fmt.Sprintf("Total cost $ over %s: rows %s, columns %s (* cheapest)", countNoun(m.traces, "trace"), m.axes[0].Key, m.axes[1].Key),
		Columns: []string{m.axes[0].Short + " \\ " + m.axes[1].Short},
		Right:   []bool{false},
	}
	br, bc, _ := m.pivot.Best(m.axes[0].Values, m.axes[1].Values)
	for _, v := range m.axes[1].Values {
		t.Columns = append(t.Columns, v)
		t.Right = append(t.Right, true)
	}
	marked := false
	for _, rv := range m.axes[0].Values {
		row := []string{rv}
		for _, cv := range m.axes[1].Values {
			c := ""
			if tot := m.pivot.At(rv, cv); tot != nil {
				c = usd4(tot.CostUSD)
				switch {
				case rv == br && cv == bc:
					c += " *"
				case !tot.Comparable():
					c += " !"
					marked = true
				}
			}
			row = append(row, c)
		}
		t.AddRow(row...)
	}
	if marked {
		t.Notes = append(t.Notes, "! some calls overflowed the context window or failed (rejected, so unbilled): never the cheapest.")
	}
	return t
}

// grid is the matrix of one figure's values by row and column, 0 where no
// run fell.
func (m *Matrix) grid(v func(*results.Total) float64) [][]float64 {
	out := make([][]float64, len(m.axes[0].Values))
	for i, rv := range m.axes[0].Values {
		out[i] = make([]float64, len(m.axes[1].Values))
		for j, cv := range m.axes[1].Values {
			if t := m.pivot.At(rv, cv); t != nil {
				out[i][j] = v(t)
			}
		}
	}
	return out
}

// axisCoords places an axis's values on a heatmap axis. A heatmap cell
// spans the midpoints to its neighbours, so only evenly spaced values draw
// even cells under their labels: evenly spaced increasing numbers are used
// as they are, evenly spaced durations in minutes, and anything else sits at
// 0, 1, 2... with the values at its ticks (the third result).
func axisCoords(ax results.Axis) ([]float64, string, []string) {
	parse := func(f func(string) (float64, bool)) []float64 {
		out := make([]float64, len(ax.Values))
		for i, v := range ax.Values {
			x, ok := f(v)
			if !ok || (i > 0 && x <= out[i-1]) {
				return nil
			}
			if i > 1 && math.Abs((x-out[i-1])-(out[1]-out[0])) > 1e-9*math.Abs(x) {
				return nil
			}
			out[i] = x
		}
		return out
	}
	if xs := parse(func(s string) (float64, bool) {
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	}); xs != nil {
		return xs, ax.Key, nil
	}
	if xs := parse(func(s string) (float64, bool) {
		d, err := time.ParseDuration(s)
		return d.Minutes(), err == nil
	}); xs != nil {
		return xs, ax.Key + " (minutes)", nil
	}
	xs := make([]float64, len(ax.Values))
	for i := range ax.Values {
		xs[i] = float64(i)
	}
	return xs, ax.Key, ax.Values
}

// Heatmaps are the sweep-cost and sweep-hit-rate figures. A cell that did
// not run shows 0.
func (m *Matrix) Heatmaps() ([]Figure, error) {
	ys, yname, ylabels := axisCoords(m.axes[0])
	xs, xname, xlabels := axisCoords(m.axes[1])
	cost := m.grid(func(t *results.Total) float64 { return t.CostUSD })
	hit := m.grid(func(t *results.Total) float64 {
		if t.Prompt == 0 {
			return 0
		}
		return 100 * float64(t.CacheRead) / float64(t.Prompt)
	})
	var figs []Figure
	for _, f := range []struct {
		name, title, z string
		zs             [][]float64
	}{
		{"sweep-cost", fmt.Sprintf("Total cost over %s", countNoun(m.traces, "trace")), "cost $", cost},
		{"sweep-hit-rate", fmt.Sprintf("Cache hit rate over %s (token-weighted)", countNoun(m.traces, "trace")), "hit %", hit},
	} {
		fig, err := HeatmapFigure(f.name, f.title, &Grid{XName: xname, YName: yname, ZName: f.z, Xs: xs, Ys: ys, Zs: f.zs, XLabels: xlabels, YLabels: ylabels})
		if err != nil {
			return nil, err
		}
		figs = append(figs, fig)
	}
	return figs, nil
}

// RunBill is one run's bill by token class, simulated beside recorded.
func RunBill(r results.RunSummary) *Table {
	t := &Table{
		Title:   fmt.Sprintf("%s under %s: %d requests", r.Trace, r.Policy, r.Requests),
		Columns: []string{"class", "tokens", "cost $"},
		Right:   []bool{false, true, true},
	}
	if r.Recorded != nil {
		t.Columns = append(t.Columns, "recorded tokens", "recorded $", "error %")
		t.Right = append(t.Right, true, true, true)
	}
	c := r.CostByClass
	type row struct {
		name     string
		sim, rec int64
		cost     float64
	}
	var rec traces.Usage
	if r.Recorded != nil {
		rec = r.Recorded.Tokens
	}
	rows := []row{
		{"input", r.Tokens.Input, rec.Input, c.Input},
		{"cache write 5m", r.Tokens.CacheWrite5m, rec.CacheWrite5m, c.CacheWrite5m},
		{"cache write 1h", r.Tokens.CacheWrite1h, rec.CacheWrite1h, c.CacheWrite1h},
		{"cache read", r.Tokens.CacheRead, rec.CacheRead, c.CacheRead},
		{"output", r.Tokens.Output, rec.Output, c.Output},
	}
	for _, x := range rows {
		cells := []string{x.name, Thousands(x.sim), usd4(x.cost)}
		if r.Recorded != nil {
			cells = append(cells, Thousands(x.rec), "", errPct(float64(x.sim), float64(x.rec)))
		}
		t.AddRow(cells...)
	}
	if c.Summarizer > 0 {
		cells := []string{"summarizer", Thousands(r.SummarizerTokens.Prompt() + r.SummarizerTokens.Output), usd4(c.Summarizer)}
		if r.Recorded != nil {
			cells = append(cells, "", "", "")
		}
		t.AddRow(cells...)
	}
	total := []string{"total", Thousands(r.Tokens.Prompt() + r.Tokens.Output), usd4(r.CostUSD + r.SummarizerCostUSD)}
	if r.Recorded != nil {
		total = append(total, Thousands(rec.Prompt()+rec.Output), usd4(r.Recorded.CostUSD), signedPct(r.Error.CostPct))
	}
	if r.OverflowErrors > 0 {
		total[2] += " !"
		t.Notes = append(t.Notes, fmt.Sprintf("! %d calls overflowed the context window and were rejected (unbilled): the cost is not comparable.", r.OverflowErrors))
	}
	t.AddRow(total...)
	return t
}

// WriteRunFacts writes what RunBill does not show, a line each: hit
// rates, misses, occupancy, compactions, latency and warnings.
func WriteRunFacts(w io.Writer, r results.RunSummary) {
	fmt.Fprintf(w, "\ncache hit rate   %s%% of prompt tokens, %s%% of requests", pct1(r.CacheHitRate), pct1(r.RequestHitRate))
	if r.Recorded != nil {
		fmt.Fprintf(w, " (recorded %s%%)", pct1(r.Recorded.CacheHitRate))
	}
	fmt.Fprintf(w, "\nlost to misses   $%s\n", usd4(r.MissCostUSD))
	if h := r.Hindsight; h != nil {
		proof := "proven optimal"
		if !h.Exact {
			proof = "not proven optimal"
		}
		// Two lines, so that each fits a narrow terminal (main_test.go's
		// TestTablesFitColumns).
		fmt.Fprintf(w, "hindsight        $%s with the cheapest cache schedule (%s)\n", usd4(h.CostUSD), proof)
		fmt.Fprintf(w, "regret           $%s, %.1f%% of cost\n", usd4(h.RegretUSD), h.RegretPct)
	}
	if len(r.Misses) > 0 {
		var parts []string
		for _, m := range r.Misses {
			parts = append(parts, fmt.Sprintf("%s %d× (%s tokens, $%s)", m.Reason, m.Calls, Thousands(m.Tokens), usd4(m.CostUSD)))
		}
		fmt.Fprintf(w, "cache broken by  %s\n", strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "occupancy        mean %s%%, max %s%%, final %s%% of the threshold\n", pct1(r.Occupancy.Mean), pct1(r.Occupancy.Max), pct1(r.Occupancy.Final))
	cp := r.Compactions
	fmt.Fprintf(w, "compactions      %d batch, %d micro, %d prune, %d idle, %d masking; %d breaker trips, %d overflow errors\n",
		cp.Batch, cp.Micro, cp.Prune, cp.Idle, cp.Masking, r.BreakerTrips, r.OverflowErrors)
	if r.UserMessagesVerbatim != nil {
		fmt.Fprintf(w, "user messages    %s%% still verbatim at the end\n", pct1(*r.UserMessagesVerbatim))
	}
	fmt.Fprintf(w, "turn latency     p50 %s, p95 %s, max %s; stalled %s on compaction\n",
		ms(r.LatencyMS.P50), ms(r.LatencyMS.P95), ms(r.LatencyMS.Max), ms(r.StallMS))
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", safetext.Line(wmsg))
	}
}

func usd4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func errPct(sim, rec float64) string {
	if rec == 0 {
		if sim == 0 {
			return "0.0"
		}
		return "n/a"
	}
	return signedPct(100 * (sim - rec) / rec)
}

func signedPct(v float64) string { return fmt.Sprintf("%+.1f", v) }

func ms(v int64) string {
	if v >= 10_000 {
		return strconv.FormatFloat(float64(v)/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatInt(v, 10) + " ms"
}
func usd2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func pct1(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) }

func percent(frac float64) string { return pct1(frac) + "%" }

// Thousands formats n with comma separators, as ccusage does.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatUSD renders dollars with places decimals, as the tables do.
func FormatUSD(v float64, places int) string { return strconv.FormatFloat(v, 'f', places, 64) }

// FormatPercent renders a fraction as a percentage with one decimal: "12.5%".
func FormatPercent(frac float64) string { return percent(frac) }

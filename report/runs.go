package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// RunsOptions tune WriteRuns.
type RunsOptions struct {
	// Title heads the text and Markdown tables.
	Title string
	// Warnings go into the JSON form (text forms leave them to stderr).
	Warnings []traces.Warning
}

// RunsTable is the compare table: one row per run with cost, hit rate,
// occupancy, compactions and p95 turn latency, and the recorded cost and the
// simulated-minus-recorded error when any run has recorded usage, and the
// calls rejected for overflowing the window when any run has some (its
// cost marked "!"). The cheapest policy of each trace (with more than one
// policy, among runs without overflow) is marked "*".
func RunsTable(runs []results.RunSummary, opts RunsOptions) *Table {
	anyRec, anyOverflow := false, false
	for _, r := range runs {
		if r.Recorded != nil {
			anyRec = true
		}
		if r.OverflowErrors > 0 {
			anyOverflow = true
		}
	}
	t := &Table{
		Title:   opts.Title,
		Columns: []string{"trace", "policy", "requests", "cost $", "hit %", "occ max %", "compactions", "p95 ms"},
		Right:   []bool{false, false, true, true, true, true, true, true},
		// Narrow terminals lose requests, then compactions, occupancy and
		// latency; never the cost, the hit rate or the overflow count.
		Drop: []int{0, 0, 6, 0, 0, 4, 5, 3},
	}
	if anyRec {
		t.Columns = append(t.Columns, "recorded $", "vs recorded %")
		t.Right = append(t.Right, true, true)
		t.Drop = append(t.Drop, 2, 1)
	}
	if anyOverflow {
		t.Columns = append(t.Columns, "overflowed")
		t.Right = append(t.Right, true)
		t.Drop = append(t.Drop, 0)
	}
	anyHS := false
	for _, r := range runs {
		anyHS = anyHS || r.Hindsight != nil
	}
	if anyHS {
		t.Columns = append(t.Columns, "hindsight $", "regret %")
		t.Right = append(t.Right, true, true)
		// Dropped with the recorded columns, the hindsight cost first.
		t.Drop = append(t.Drop, 2, 1)
	}
	best := bestByTrace(runs)
	marked := false
	for i, r := range runs {
		pol := r.Policy
		if best[i] {
			pol += " *"
			marked = true
		}
		cost := usd(r.CostUSD)
		if r.OverflowErrors > 0 {
			cost += " !"
		}
		row := []string{r.Trace, pol, strconv.Itoa(r.Requests), cost, pct(r.CacheHitRate),
			pct(r.Occupancy.Max), strconv.Itoa(r.Compactions.Total()), strconv.FormatInt(r.LatencyMS.P95, 10)}
		if anyRec {
			if r.Recorded != nil {
				row = append(row, usd(r.Recorded.CostUSD), signed(r.Error.CostPct))
			} else {
				row = append(row, "", "")
			}
		}
		if anyOverflow {
			row = append(row, strconv.Itoa(r.OverflowErrors))
		}
		if anyHS {
			if h := r.Hindsight; h != nil {
				row = append(row, usd(h.CostUSD), strconv.FormatFloat(h.RegretPct, 'f', 1, 64))
			} else {
				row = append(row, "", "")
			}
		}
		t.AddRow(row...)
	}
	if marked {
		t.Notes = append(t.Notes, "* cheapest policy for the trace (among runs whose every call fit the window)")
	}
	if anyRec {
		t.Notes = append(t.Notes, "vs recorded %: cost against what was billed; for the recorded policy, the simulation's error.")
	}
	if anyOverflow {
		t.Notes = append(t.Notes, "! overflowed: calls rejected for exceeding the context window (unbilled), so the cost is not comparable and never the best.")
	}
	if anyHS {
		t.Notes = append(t.Notes, "hindsight $: the same requests under the cheapest cache schedule; regret %: what the policy's schedule paid over it, in % of cost (docs/metrics.md).")
	}
	for _, r := range runs {
		// What the bills chose where the log's harness version leaves a
		// setting open (docs/fidelity.md, "what the bills decide").
		if f := r.Fidelity; f != nil && f.Thinking != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s, %s: earlier thinking %s (Claude Code keeps it behind a server-side flag the log does not show).", r.Trace, r.Policy, f.Thinking))
		}
		if f := r.Fidelity; f != nil && f.SharedFloor != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s, %s: shared floor after idle gaps %s (sessions the log does not show may keep it cached).", r.Trace, r.Policy, f.SharedFloor))
		}
	}
	return t
}

// bestByTrace marks the cheapest run of each trace that has several runs;
// ties go to the first. A run with overflow errors is never the best: the
// calls the provider rejected cost nothing, which is not a saving.
func bestByTrace(runs []results.RunSummary) []bool {
	best := map[string]int{}
	count := map[string]int{}
	for i, r := range runs {
		count[r.Trace]++
		if r.OverflowErrors > 0 {
			continue
		}
		if j, ok := best[r.Trace]; !ok || r.CostUSD < runs[j].CostUSD {
			best[r.Trace] = i
		}
	}
	out := make([]bool, len(runs))
	for tr, i := range best {
		if count[tr] > 1 {
			out[i] = true
		}
	}
	return out
}

// WriteRuns prints runs in format f; JSON is the summary.json document.
func WriteRuns(w io.Writer, f Format, runs []results.RunSummary, opts RunsOptions) error {
	if f == JSON {
		return WriteSummary(w, results.Summary{Runs: runs, Warnings: opts.Warnings})
	}
	return RunsTable(runs, opts).Write(w, f)
}

func usd(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func pct(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) }

func signed(v float64) string { return fmt.Sprintf("%+.2f", v) }

package main

import (
	"fmt"
	"strconv"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
)

// workloadTable is the ten-second view of a comparison: one row per policy,
// one column per workload holding the policy's cost summed over the
// workload's sessions, the cheapest of each column marked "*". A run with
// overflowed or failed calls ("!") is never the cheapest: its rejected calls
// cost nothing. The last rows say how much the best saves against the first
// comparable policy of the column, and the best's cache hit rate.
func workloadTable(runs []report.RunSummary, workloads map[string]string, policies []string) *report.Table {
	pv := experiment.NewPivot(runs,
		func(r report.RunSummary) string { return r.Policy },
		func(r report.RunSummary) string { return workloads[r.Trace] })
	t := &report.Table{
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
	saves, hits := []string{"best saves"}, []string{"best hit %"}
	for _, w := range pv.Cols {
		b, z := pv.At(pv.BestIn(w, policies), w), pv.At(pv.FirstComparable(w, policies), w)
		s, h := "", ""
		if b != nil && z != nil && z.CostUSD > 0 {
			s = pct1(1-b.CostUSD/z.CostUSD) + "%  "
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
		"best saves: against the first policy of the column, in row order, whose calls all fit.",
		"Per-session rows: ctxsim compare --detail; one workload: --profile P or --trace PATH.",
	}
	if failed {
		t.Notes[1] = "! some calls overflowed the context window or failed (rejected, so unbilled): not comparable, never the best."
	}
	return t
}

func usd2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func pct1(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) }

func percent(frac float64) string { return pct1(frac) + "%" }

package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

// workloadOf names the workload a session belongs to: its synthetic
// profile, or the format it was recorded in.
func workloadOf(s *traces.Session) string {
	if p, ok := strings.CutPrefix(s.Format, "synth:"); ok {
		return p
	}
	if s.Format == "" {
		return "native"
	}
	return strings.SplitN(s.Format, ":", 2)[0] + " logs"
}

// workloadTable is the ten-second view of a comparison: one row per policy,
// one column per workload holding the policy's cost summed over the
// workload's sessions, the cheapest of each column marked "*". A run with
// overflow errors ("!") is never the cheapest: its rejected calls cost
// nothing. The last rows say how much the best saves against the first
// comparable policy of the column, and the best's cache hit rate.
func workloadTable(runs []report.RunSummary, workloads map[string]string, policies []string) *report.Table {
	type agg struct {
		cost       float64
		read, prmt int64
		sessions   int
		overflows  int
	}
	var order []string
	sums := map[string]map[string]*agg{}
	for _, r := range runs {
		w := workloads[r.Trace]
		if sums[w] == nil {
			sums[w] = map[string]*agg{}
			order = append(order, w)
		}
		a := sums[w][r.Policy]
		if a == nil {
			a = &agg{}
			sums[w][r.Policy] = a
		}
		a.cost += r.CostUSD
		a.overflows += r.OverflowErrors
		a.read += r.Tokens.CacheRead
		a.prmt += r.Tokens.Prompt()
		a.sessions++
	}
	best := map[string]string{}
	base := map[string]string{}
	for _, w := range order {
		for _, p := range policies {
			a := sums[w][p]
			if a == nil || a.overflows > 0 {
				continue
			}
			if base[w] == "" {
				base[w] = p
			}
			if best[w] == "" || a.cost < sums[w][best[w]].cost {
				best[w] = p
			}
		}
	}
	t := &report.Table{
		Title:   "Cost in $ per policy and workload (summed over the workload's sessions; * cheapest)",
		Columns: []string{"policy"},
		Right:   []bool{false},
	}
	for _, w := range order {
		n := 0
		for _, a := range sums[w] {
			n = max(n, a.sessions)
		}
		t.Columns = append(t.Columns, fmt.Sprintf("%s (%d)", w, n))
		t.Right = append(t.Right, true)
	}
	for _, p := range policies {
		row := []string{p}
		for _, w := range order {
			a := sums[w][p]
			switch {
			case a == nil:
				row = append(row, "")
			case p == best[w]:
				row = append(row, usd2(a.cost)+" *")
			case a.overflows > 0:
				row = append(row, usd2(a.cost)+" !")
			default:
				row = append(row, usd2(a.cost)+"  ")
			}
		}
		t.AddRow(row...)
	}
	saves, hits := []string{"best saves"}, []string{"best hit %"}
	for _, w := range order {
		b, z := sums[w][best[w]], sums[w][base[w]]
		s, h := "", ""
		if b != nil && z != nil && z.cost > 0 {
			s = pct1(1-b.cost/z.cost) + "%  "
		}
		if b != nil && b.prmt > 0 {
			h = pct1(float64(b.read)/float64(b.prmt)) + "  "
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
	return t
}

func usd2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func pct1(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) }

func percent(frac float64) string { return pct1(frac) + "%" }

package main

import (
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
	return "recorded " + s.Format
}

// workloadTable is the ten-second view: one row per workload, one cost
// column per policy (summed over the workload's sessions), the cheapest
// marked, and the hit rate of the cheapest. Policies that did not run on a
// workload (recorded on synthetic traces) are blank.
func workloadTable(runs []report.RunSummary, workloads map[string]string, policies []string) *report.Table {
	type agg struct {
		cost       float64
		read, prmt int64
		n          int
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
		a.prmt += r.Tokens.Input + r.Tokens.CacheWrite5m + r.Tokens.CacheWrite1h + r.Tokens.CacheRead
		a.n++
	}
	t := &report.Table{
		Title:   "Cost in $ per workload and policy (summed over the workload's sessions; * cheapest)",
		Columns: append([]string{"workload", "sessions"}, policies...),
	}
	t.Columns = append(t.Columns, "best", "saves", "vs", "best hit %")
	t.Right = []bool{false, true}
	for range policies {
		t.Right = append(t.Right, true)
	}
	t.Right = append(t.Right, false, true, false, true)
	for _, w := range order {
		best, base := "", ""
		for _, p := range policies {
			a := sums[w][p]
			if a == nil {
				continue
			}
			if a.overflows == 0 && (best == "" || a.cost < sums[w][best].cost) {
				best = p
			}
			if base == "" && a.overflows == 0 {
				base = p
			}
		}
		n := 0
		row := []string{w, ""}
		for _, p := range policies {
			a := sums[w][p]
			if a == nil {
				row = append(row, "")
				continue
			}
			n = max(n, a.n)
			c := usd2(a.cost)
			switch {
			case p == best:
				c += " *"
			case a.overflows > 0:
				c += " !"
			}
			row = append(row, c)
		}
		row[1] = itoa(n)
		if best == "" {
			row = append(row, "", "", "", "")
			t.AddRow(row...)
			continue
		}
		b := sums[w][best]
		saves := ""
		if base != "" && sums[w][base].cost > 0 {
			saves = pct1(1-b.cost/sums[w][base].cost) + "%"
		}
		hit := ""
		if b.prmt > 0 {
			hit = pct1(float64(b.read) / float64(b.prmt))
		}
		row = append(row, best, saves, base, hit)
		t.AddRow(row...)
	}
	t.Notes = append(t.Notes,
		"! some calls overflowed the context window (rejected, so unbilled): not comparable, never the best.",
		"saves: the best policy's cost below that of the first policy, in column order, whose calls all fit (vs).",
		"Per-session rows: ctxsim compare --detail; one workload: --profile P or --trace PATH.")
	return t
}

func itoa(n int) string { return strconv.Itoa(n) }

func usd2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func pct1(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) }

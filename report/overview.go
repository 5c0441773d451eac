package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
)

// policyPalette is one colour per policy, the same in every chart of a
// report: Tableau 10 and two more, distinct for readers with the common
// colour-vision deficiencies in the first eight. Policies take them in the
// order they first appear in the runs; past twelve they repeat.
var policyPalette = []string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#8c564b",
}

// policyColors maps each policy of runs to its colour.
func policyColors(runs []results.RunSummary) map[string]string {
	out := map[string]string{}
	for _, r := range runs {
		if _, ok := out[r.Policy]; !ok {
			out[r.Policy] = policyPalette[len(out)%len(policyPalette)]
		}
	}
	return out
}

type ovBar struct {
	Label, Color, Value string
	// Width is the bar's length, % of the widest bar of its chart.
	Width    float64
	Best     bool
	Overflow bool
	Note     string
}

type ovChart struct {
	Title, Sub string
	Bars       []ovBar
}

type ovStack struct {
	Label, Value string
	Segs         []ovBar
}

type overview struct {
	Cheapest []ovChart
	Savings  ovChart
	Breaks   []ovStack
	Legend   []ovBar
	Answer   string
}

// workloadOf names a trace's workload: in.Workloads, else the trace.
func workloadOf(in HTMLInput, trace string) string {
	if w := in.Workloads[trace]; w != "" {
		return w
	}
	return trace
}

type wlTotal struct {
	cost     float64
	runs     int
	overflow int
}

// buildOverview answers the report's three questions: which policy is
// cheapest per workload (and by how much), what each policy saves over
// the first one, and which causes of cache misses cost the most.
func buildOverview(in HTMLInput, colors map[string]string) overview {
	var ov overview
	var wls, pols []string
	tot := map[[2]string]*wlTotal{}
	for _, r := range in.Runs {
		w := workloadOf(in, r.Trace)
		if !slices.Contains(wls, w) {
			wls = append(wls, w)
		}
		if !slices.Contains(pols, r.Policy) {
			pols = append(pols, r.Policy)
		}
		k := [2]string{w, r.Policy}
		if tot[k] == nil {
			tot[k] = &wlTotal{}
		}
		t := tot[k]
		t.cost += r.CostUSD
		t.runs++
		t.overflow += r.OverflowErrors
	}
	for _, p := range pols {
		ov.Legend = append(ov.Legend, ovBar{Label: p, Color: colors[p]})
	}
	// 1. Cheapest per workload.
	wins := map[string]int{}
	for _, w := range wls {
		c := ovChart{Title: w}
		hi, best := 0.0, ""
		for _, p := range pols {
			if t := tot[[2]string{w, p}]; t != nil {
				hi = math.Max(hi, t.cost)
				if t.overflow == 0 && (best == "" || t.cost < tot[[2]string{w, best}].cost) {
					best = p
				}
			}
		}
		base := ""
		for _, p := range pols {
			if t := tot[[2]string{w, p}]; t != nil && t.overflow == 0 {
				base = p
				break
			}
		}
		for _, p := range pols {
			t := tot[[2]string{w, p}]
			if t == nil {
				continue
			}
			b := ovBar{Label: p, Color: colors[p], Value: "$" + money(t.cost), Best: p == best && len(pols) > 1, Overflow: t.overflow > 0}
			if hi > 0 {
				b.Width = t.cost / hi * 100
			}
			if b.Overflow {
				b.Note = fmt.Sprintf("%d calls overflowed", t.overflow)
			}
			c.Bars = append(c.Bars, b)
		}
		if best != "" && len(pols) > 1 {
			wins[best]++
			sub := "cheapest: " + best
			if base != "" && base != best {
				bc, xc := tot[[2]string{w, base}].cost, tot[[2]string{w, best}].cost
				if bc > 0 {
					sub += fmt.Sprintf(", %.1f%% below %s", (bc-xc)/bc*100, base)
				}
			}
			c.Sub = sub
		}
		ov.Cheapest = append(ov.Cheapest, c)
	}
	// 2. What each saves against the first policy, over the workloads where
	// both ran and every call of both fit.
	if len(pols) > 1 {
		base := pols[0]
		ov.Savings.Title = "Saving against " + base + ", summed over the workloads where both fit"
		type sv struct {
			p   string
			pct float64
			ok  bool
		}
		var svs []sv
		hi := 0.0
		for _, p := range pols[1:] {
			var b, x float64
			for _, w := range wls {
				tb, tx := tot[[2]string{w, base}], tot[[2]string{w, p}]
				if tb == nil || tx == nil || tb.overflow > 0 || tx.overflow > 0 {
					continue
				}
				b += tb.cost
				x += tx.cost
			}
			s := sv{p: p, ok: b > 0}
			if s.ok {
				s.pct = (b - x) / b * 100
				hi = math.Max(hi, math.Abs(s.pct))
			}
			svs = append(svs, s)
		}
		for _, s := range svs {
			b := ovBar{Label: s.p, Color: colors[s.p], Value: "n/a"}
			if s.ok {
				b.Value = fmt.Sprintf("%+.1f%%", s.pct)
				if hi > 0 {
					b.Width = math.Abs(s.pct) / hi * 100
				}
			}
			ov.Savings.Bars = append(ov.Savings.Bars, b)
		}
	}
	// 3. Where the cache breaks: the extra $ of re-sent tokens by cause,
	// each bar split by policy.
	type cause struct {
		usd   float64
		calls int
		by    map[string]float64
	}
	causes := map[string]*cause{}
	for _, r := range in.Runs {
		for _, m := range r.Misses {
			c := causes[m.Reason]
			if c == nil {
				c = &cause{by: map[string]float64{}}
				causes[m.Reason] = c
			}
			c.usd += m.CostUSD
			c.calls += m.Calls
			c.by[r.Policy] += m.CostUSD
		}
	}
	names := make([]string, 0, len(causes))
	hi := 0.0
	for n, c := range causes {
		names = append(names, n)
		hi = math.Max(hi, c.usd)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(causes[b].usd, causes[a].usd), strings.Compare(a, b))
	})
	for _, n := range names {
		c := causes[n]
		st := ovStack{Label: n, Value: fmt.Sprintf("$%s over %d calls", money(c.usd), c.calls)}
		for _, p := range pols {
			if v := c.by[p]; v > 0 && hi > 0 {
				st.Segs = append(st.Segs, ovBar{Label: p, Color: colors[p], Width: v / hi * 100, Value: "$" + money(v)})
			}
		}
		ov.Breaks = append(ov.Breaks, st)
	}
	// The one-line answer.
	if len(wins) > 0 {
		type w struct {
			p string
			n int
		}
		var ws []w
		for p, n := range wins {
			ws = append(ws, w{p, n})
		}
		slices.SortFunc(ws, func(a, b w) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.p, b.p)) })
		ov.Answer = fmt.Sprintf("%s is cheapest on %d of %d workloads", ws[0].p, ws[0].n, len(wls))
		if len(names) > 0 {
			ov.Answer += fmt.Sprintf("; the costliest cache break is %q ($%s over all runs)", names[0], money(causes[names[0]].usd))
		}
		ov.Answer += "."
	}
	return ov
}

// money is dollars with two decimals, or four below a dollar.
func money(v float64) string {
	if math.Abs(v) < 1 {
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

type ovPanel struct {
	Policy, Color string
	SVG           template.HTML
	Overflow      bool
	Caption       string
}

type ovTrace struct {
	Trace  string
	Hit    []ovPanel
	Occ    []ovPanel
	Cost   ovChart
	Calls  int
	HasOcc bool
}

type ovWorkload struct {
	Name   string
	Traces []ovTrace
}

// maxSparkPoints bounds a sparkline's points: enough to show a sawtooth,
// few enough that a report of a hundred runs stays small.
const maxSparkPoints = 80

// sparkline is a small inline SVG of ys (call 1..n) on a fixed 0..top
// scale, with the scale's ends labelled in unit.
func sparkline(ys []float64, top float64, unit, color string) template.HTML {
	const w, h, pad = 200.0, 56.0, 2.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" viewBox="0 0 %g %g" width="%g" height="%g" role="img"><rect x="0" y="0" width="%g" height="%g" fill="#f7f8fa"/>`, w, h+12, w, h+12, w, h)
	n := len(ys)
	if n > 0 && top > 0 {
		step := max(1, (n+maxSparkPoints-1)/maxSparkPoints)
		b.WriteString(`<polyline fill="none" stroke="` + color + `" stroke-width="1.6" points="`)
		for i := 0; i < n; i += step {
			x := pad
			if n > 1 {
				x = pad + float64(i)/float64(n-1)*(w-2*pad)
			}
			y := h - pad - math.Min(ys[i], top)/top*(h-2*pad)
			fmt.Fprintf(&b, "%.0f,%.0f ", x, y)
		}
		if (n-1)%step != 0 {
			fmt.Fprintf(&b, "%.0f,%.0f", w-pad, h-pad-math.Min(ys[n-1], top)/top*(h-2*pad))
		}
		b.WriteString(`"/>`)
	}
	fmt.Fprintf(&b, `<text x="2" y="%g" font-size="9" fill="#5b6475">call 1</text><text x="%g" y="%g" font-size="9" fill="#5b6475" text-anchor="end">call %d · 0–%s</text></svg>`,
		h+10, w-2, h+10, n, unit)
	return template.HTML(b.String())
}

// buildWorkloads is the per-workload sections: per trace, one small panel
// per policy (cache hit rate per call, occupancy per call), on shared
// scales, and the cost of each policy as bars.
func buildWorkloads(in HTMLInput, colors map[string]string) []ovWorkload {
	byTrace := map[string][]sim.Record{}
	for _, r := range in.Records {
		byTrace[r.Trace] = append(byTrace[r.Trace], r)
	}
	var out []ovWorkload
	idx := map[string]int{}
	seen := map[string]bool{}
	for _, run := range in.Runs {
		if seen[run.Trace] {
			continue
		}
		seen[run.Trace] = true
		w := workloadOf(in, run.Trace)
		i, ok := idx[w]
		if !ok {
			i = len(out)
			idx[w] = i
			out = append(out, ovWorkload{Name: w})
		}
		tr := ovTrace{Trace: run.Trace}
		recs := slices.Clone(byTrace[run.Trace])
		slices.SortStableFunc(recs, func(a, b sim.Record) int { return cmp.Compare(a.Seq, b.Seq) })
		hiCost, bestCost, best := 0.0, 0.0, ""
		for _, r := range in.Runs {
			if r.Trace == run.Trace {
				hiCost = math.Max(hiCost, r.CostUSD)
				if r.OverflowErrors == 0 && (best == "" || r.CostUSD < bestCost) {
					best, bestCost = r.Policy, r.CostUSD
				}
			}
		}
		for _, r := range in.Runs {
			if r.Trace != run.Trace {
				continue
			}
			var hit, occ []float64
			for _, rec := range recs {
				if rec.Policy != r.Policy || rec.Kind != sim.KindCall || rec.Error != "" {
					continue
				}
				hit = append(hit, rec.Usage.HitRate()*100)
				if d := results.OccupancyDenominator(rec); d > 0 {
					occ = append(occ, float64(rec.Prompt)/float64(d)*100)
				}
			}
			tr.Calls = max(tr.Calls, len(hit))
			c := colors[r.Policy]
			ovf := r.OverflowErrors > 0
			tr.Hit = append(tr.Hit, ovPanel{Policy: r.Policy, Color: c, Overflow: ovf, SVG: sparkline(hit, 100, "100 %", c),
				Caption: pct(r.CacheHitRate) + "% overall"})
			if len(occ) > 0 {
				tr.HasOcc = true
			}
			tr.Occ = append(tr.Occ, ovPanel{Policy: r.Policy, Color: c, Overflow: ovf, SVG: sparkline(occ, 100, "100 %", c),
				Caption: "max " + pct(r.Occupancy.Max) + "%"})
			b := ovBar{Label: r.Policy, Color: c, Value: "$" + money(r.CostUSD), Best: r.Policy == best, Overflow: ovf}
			if hiCost > 0 {
				b.Width = r.CostUSD / hiCost * 100
			}
			if ovf {
				b.Note = fmt.Sprintf("%d calls overflowed", r.OverflowErrors)
			}
			tr.Cost.Bars = append(tr.Cost.Bars, b)
		}
		out[i].Traces = append(out[i].Traces, tr)
	}
	return out
}

package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/usage"
)

// WriteCost writes the cost report of recorded sessions (ctxsim cost) in
// f, times in loc. Text and Markdown are for people (thousands separators,
// children and models indented under their row); CSV is for programs
// (plain numbers, RFC 3339 times, a parent column and one row per group
// and model).
func WriteCost(w io.Writer, f Format, rep *usage.Cost, loc *time.Location) error {
	switch f {
	case JSON:
		return WriteJSON(w, rep)
	case CSV:
		return writeCostCSV(w, rep, loc)
	}
	num, cost, rate := Thousands, dollars, FormatPercent
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format("2006-01-02 15:04")
	}
	key := string(rep.By)
	cols := []string{key, "models", "first", "last", "requests", "input", "5m write", "1h write", "cache read", "output", "cost", "hit rate"}
	right := make([]bool, len(cols))
	for i := range right {
		right[i] = i >= 4
	}
	// Narrow terminals lose, in order: the models column (the breakdown
	// rows still name them), first and last activity, requests, the 5m/1h
	// write split, output.
	drop := []int{0, 9, 8, 7, 6, 0, 5, 5, 0, 4, 0, 0}
	t := &Table{Columns: cols, Right: right, Drop: drop}
	row := func(id, model string, first, last time.Time, requests int, tk usage.Tokens, usd float64, hit string) {
		t.AddRow(id, model, when(first), when(last), strconv.Itoa(requests), num(tk.Input), num(tk.CacheWrite5m), num(tk.CacheWrite1h),
			num(tk.CacheRead), num(tk.Output), cost(usd), hit)
	}
	// A row names its one model, or says how many, with a row per model
	// (costliest first) below it.
	models := func(ms []usage.Model) string {
		if len(ms) == 1 {
			return ms[0].Model
		}
		return fmt.Sprintf("%d models", len(ms))
	}
	breakdown := func(ms []usage.Model, indent string) {
		if len(ms) < 2 {
			return
		}
		for _, m := range ms {
			row(indent+"  · "+m.Model, "", time.Time{}, time.Time{}, m.Requests, m.Tokens, m.CostUSD, "")
		}
	}
	if rep.By == usage.BySession {
		var add func(r *usage.SessionRow, depth int, parent string)
		add = func(r *usage.SessionRow, depth int, parent string) {
			id := r.ID
			indent := strings.Repeat("  ", depth)
			if depth > 0 {
				id = indent + strings.TrimPrefix(strings.TrimPrefix(r.ID, parent), ".")
			}
			row(id, models(r.Models), r.First, r.Last, r.Requests, r.Tokens, r.CostUSD, rate(r.HitRate))
			breakdown(r.Models, indent)
			for _, c := range r.Children {
				add(c, depth+1, r.ID)
			}
		}
		for _, r := range rep.Sessions {
			add(r, 0, "")
		}
	} else {
		for _, g := range rep.Groups {
			row(g.Key, models(g.Models), g.First, g.Last, g.Requests, g.Tokens, g.CostUSD, rate(g.HitRate))
			if rep.By != usage.ByModel {
				breakdown(g.Models, "")
			}
		}
	}
	tt := rep.Totals
	row("total", models(tt.Models), tt.First, tt.Last, tt.Requests, tt.Tokens, tt.CostUSD, rate(tt.HitRate))
	return t.Write(w, f)
}

// writeCostCSV is one row per group and model (per session and model,
// with its parent, for BySession) and a total row: plain numbers, RFC 3339
// times, the hit rate of each row's own tokens.
func writeCostCSV(w io.Writer, rep *usage.Cost, loc *time.Location) error {
	key := string(rep.By)
	cols := []string{key}
	if rep.By == usage.BySession {
		cols = append(cols, "parent")
	}
	if rep.By != usage.ByModel {
		cols = append(cols, "model")
	}
	cols = append(cols, "first", "last", "requests", "input", "cache_write_5m", "cache_write_1h", "cache_read", "output", "cost_usd", "cache_hit_rate")
	t := &Table{Columns: cols}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format(time.RFC3339)
	}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	f6 := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	row := func(k, parent, model string, first, last time.Time, requests int, tk usage.Tokens, usd float64) {
		cells := []string{k}
		if rep.By == usage.BySession {
			cells = append(cells, parent)
		}
		if rep.By != usage.ByModel {
			cells = append(cells, model)
		}
		u := traces.Usage{Input: tk.Input, CacheWrite5m: tk.CacheWrite5m, CacheWrite1h: tk.CacheWrite1h, CacheRead: tk.CacheRead, Output: tk.Output}
		cells = append(cells, when(first), when(last), strconv.Itoa(requests), i64(tk.Input), i64(tk.CacheWrite5m), i64(tk.CacheWrite1h),
			i64(tk.CacheRead), i64(tk.Output), f6(usd), f6(results.Round6(u.HitRate())))
		t.AddRow(cells...)
	}
	if rep.By == usage.BySession {
		var add func(r *usage.SessionRow, parent string)
		add = func(r *usage.SessionRow, parent string) {
			for _, m := range r.Models {
				row(r.ID, parent, m.Model, r.First, r.Last, m.Requests, m.Tokens, m.CostUSD)
			}
			for _, c := range r.Children {
				add(c, r.ID)
			}
		}
		for _, r := range rep.Sessions {
			add(r, "")
		}
	} else {
		for _, g := range rep.Groups {
			for _, m := range g.Models {
				row(g.Key, "", m.Model, g.First, g.Last, m.Requests, m.Tokens, m.CostUSD)
			}
		}
	}
	tt := rep.Totals
	row("total", "", "", tt.First, tt.Last, tt.Requests, tt.Tokens, tt.CostUSD)
	return t.Write(w, CSV)
}

func dollars(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }

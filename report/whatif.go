package report

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/results"
)

// change renders a percentage change, "0%" when it rounds to nothing.
func change(pct float64) string {
	if math.Abs(pct) < 0.5 {
		return "0%"
	}
	return fmt.Sprintf("%+.0f%%", pct)
}

// WhatifTable is the report as whatif prints it: a row per session and the total.
func WhatifTable(rep results.WhatifReport) *Table {
	t := &Table{
		Title:   "What recorded sessions cost, and would have cost ($; savings vs the replay of what happened)",
		Columns: []string{"session", "recorded", "replay", "error"},
		Right:   []bool{false, true, true, true},
		Drop:    []int{0, 0, 0, 2},
	}
	for _, name := range rep.Policies {
		t.Columns = append(t.Columns, name)
		t.Right = append(t.Right, true)
		t.Drop = append(t.Drop, 1) // narrow terminals keep the first policies
	}
	t.Columns = append(t.Columns, "best")
	t.Right = append(t.Right, false)
	t.Drop = append(t.Drop, 0)
	hs := rep.Totals.HindsightUSD != nil
	if hs {
		t.Columns = append(t.Columns, "hindsight", "replay regret")
		t.Right = append(t.Right, true, true)
		// Narrow terminals drop these before the policies (rightmost first).
		t.Drop = append(t.Drop, 1, 1)
	}
	unbilled := false
	row := func(ws results.WhatifSession) {
		rec := "n/a"
		if ws.RecordedUSD != nil {
			rec = FormatUSD(*ws.RecordedUSD, 2)
		}
		errCell := "n/a"
		if ws.ReplayErrorPct != nil {
			errCell = fmt.Sprintf("%+.1f%%", *ws.ReplayErrorPct)
		}
		replay := FormatUSD(ws.ReplayUSD, 2)
		if ws.ReplayUnbilled > 0 {
			replay += " !"
			unbilled = true
		}
		cells := []string{ws.ID, rec, replay, errCell}
		byName := map[string]results.WhatifPolicy{}
		for _, p := range ws.Policies {
			byName[p.Policy] = p
		}
		for _, name := range rep.Policies {
			p, ok := byName[name]
			if !ok {
				cells = append(cells, "")
				continue
			}
			mark := ""
			if p.WithinError {
				mark = "~"
			}
			cell := fmt.Sprintf("%s (%s%s)", FormatUSD(p.CostUSD, 2), mark, change(-p.SavingsPct))
			if p.Unbilled > 0 {
				cell += " !"
				unbilled = true
			}
			cells = append(cells, cell)
		}
		cells = append(cells, ws.Best)
		if hs {
			h, r := "", ""
			if ws.HindsightUSD != nil {
				h, r = FormatUSD(*ws.HindsightUSD, 2), FormatUSD(*ws.ReplayRegretUSD, 2)
				if b := ws.HindsightBoundUSD; ws.ID == "total" && b != nil && FormatUSD(*b, 2) != h {
					// A gap open: the optimum lies in the range.
					h = FormatUSD(*b, 2) + "–" + h
				}
				if ws.ReplayUSD > 0 {
					r += fmt.Sprintf(" (%.1f%%)", 100**ws.ReplayRegretUSD/ws.ReplayUSD)
				}
			}
			cells = append(cells, h, r)
		}
		t.AddRow(cells...)
	}
	for _, ws := range rep.Sessions {
		row(ws)
	}
	row(rep.Totals)
	t.Notes = append(t.Notes, "(+N%) is the change against the replay of what happened (recorded-observed: the re-sends the log shows included);",
		"error is that replay's own error against the bill; (~N%) marks a change the error could explain.")
	if unbilled {
		t.Notes = append(t.Notes, "! some calls overflowed the context window or failed (rejected, so unbilled): the recorded column has their bill, the cost does not; not comparable, never the best.")
	}
	if hs {
		t.Notes = append(t.Notes, "hindsight: the replay's requests under the cheapest cache schedule; replay regret: what the replayed schedule paid over it ({json} has every policy's regret_usd).")
	}
	return t
}

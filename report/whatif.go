package report

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/traces"
)

// A WhatifPolicy is one policy's cost against the replay of what happened.
type WhatifPolicy struct {
	Policy     string  `json:"policy"`
	CostUSD    float64 `json:"cost_usd"`
	SavingsUSD float64 `json:"savings_usd"`
	SavingsPct float64 `json:"savings_pct"`
	// WithinError is true when the replay's own error could explain the
	// savings: |savings_pct| ≤ |replay_error_pct|.
	WithinError bool `json:"within_error"`
	// RegretUSD is cost_usd − the session's hindsight_usd: what the policy
	// paid over the cheapest cache schedule of the replayed transcript
	// (negative when the policy's own transcript beats it).
	RegretUSD *float64 `json:"regret_usd,omitempty"`
}

// A WhatifSession is one session (or the total) of a what-if report.
type WhatifSession struct {
	ID string `json:"id"`
	// RecordedUSD is what was billed; ReplayUSD the simulation of it, the
	// base savings are measured from.
	RecordedUSD *float64 `json:"recorded_usd"`
	ReplayUSD   float64  `json:"replay_usd"`
	// ReplayErrorPct is the replay's own error: (replay − recorded) in %
	// of recorded; null without a recorded bill.
	ReplayErrorPct *float64       `json:"replay_error_pct"`
	Policies       []WhatifPolicy `json:"policies"`
	Best           string         `json:"best"`
	// HindsightUSD is the replay under the cheapest cache schedule of its
	// requests (docs/metrics.md); ReplayRegretUSD what the replayed
	// schedule paid over it; HindsightExact whether it is proven optimal.
	HindsightUSD    *float64 `json:"hindsight_usd,omitempty"`
	ReplayRegretUSD *float64 `json:"replay_regret_usd,omitempty"`
	HindsightExact  *bool    `json:"hindsight_exact,omitempty"`
}

// A WhatifReport prices recorded sessions under other policies against
// the replay of what happened (whatif --json).
type WhatifReport struct {
	policies []string        // the compared policies, in column order
	Sessions []WhatifSession `json:"sessions"`
	Totals   WhatifSession   `json:"totals"`
	// Warnings are the input's warnings (the command fills them).
	Warnings []traces.Warning `json:"warnings"`
}

// NewWhatif prices each session with a replay of what happened (policies[0],
// the baseline) under every other policy, against that replay, and names the
// best: the cheapest policy whose calls all fit and were billed (the Pivot
// rule), the replay included.
func NewWhatif(runs []RunSummary, policies []string) WhatifReport {
	base := policies[0]
	var kept []RunSummary
	hasBase := map[string]bool{}
	for _, r := range runs {
		if r.Policy == base {
			hasBase[r.Trace] = true
		}
	}
	for _, r := range runs {
		if hasBase[r.Trace] {
			kept = append(kept, r)
		}
	}
	policy := func(r RunSummary) string { return r.Policy }
	bySession := NewPivot(kept, policy, func(r RunSummary) string { return r.Trace })
	total := NewPivot(kept, policy, func(RunSummary) string { return "total" })
	rows := policies
	rep := WhatifReport{policies: policies[1:]}
	tot := WhatifSession{ID: "total"}
	var totRec float64
	haveRec := false
	recorded := map[string]*float64{}
	for _, r := range kept {
		if r.Policy == base && r.Recorded != nil {
			v := r.Recorded.CostUSD
			recorded[r.Trace] = &v
			totRec += v
			haveRec = true
		}
	}
	row := func(p *Pivot, col string, ws *WhatifSession) {
		replay := p.At(base, col)
		ws.ReplayUSD = replay.CostUSD
		if ws.RecordedUSD != nil && *ws.RecordedUSD > 0 {
			e := 100 * (ws.ReplayUSD - *ws.RecordedUSD) / *ws.RecordedUSD
			ws.ReplayErrorPct = &e
		}
		for _, name := range policies[1:] {
			var w WhatifPolicy
			if t := p.At(name, col); t != nil {
				w = savings(name, t.CostUSD, replay.CostUSD)
			} else if col == "total" {
				w = savings(name, 0, replay.CostUSD)
			} else {
				continue
			}
			w.WithinError = ws.ReplayErrorPct != nil && math.Abs(w.SavingsPct) <= math.Abs(*ws.ReplayErrorPct)
			ws.Policies = append(ws.Policies, w)
		}
		ws.Best = p.BestIn(col, rows)
	}
	for _, id := range bySession.Cols {
		ws := WhatifSession{ID: id, RecordedUSD: recorded[id]}
		row(bySession, id, &ws)
		rep.Sessions = append(rep.Sessions, ws)
	}
	if haveRec {
		tot.RecordedUSD = &totRec
	}
	if len(kept) > 0 {
		row(total, "total", &tot)
	} else {
		tot.Best = base
	}
	rep.Totals = tot
	rep.addHindsight(kept, base)
	return rep
}

// addHindsight sets each session's hindsight optimum (of the baseline
// replay) and every policy's regret against it; the totals get the sums
// when every session has one.
func (rep *WhatifReport) addHindsight(runs []RunSummary, base string) {
	hs := map[string]*Hindsight{}
	for _, r := range runs {
		if r.Policy == base && r.Hindsight != nil {
			hs[r.Trace] = r.Hindsight
		}
	}
	set := func(ws *WhatifSession, h float64, exact bool) {
		h = Round6(h)
		regret := Round6(ws.ReplayUSD - h)
		ws.HindsightUSD, ws.HindsightExact, ws.ReplayRegretUSD = &h, &exact, &regret
		for i := range ws.Policies {
			r := Round6(ws.Policies[i].CostUSD - h)
			ws.Policies[i].RegretUSD = &r
		}
	}
	sum, exact, all := 0.0, true, len(rep.Sessions) > 0
	for i := range rep.Sessions {
		ws := &rep.Sessions[i]
		h := hs[ws.ID]
		if h == nil {
			all = false
			continue
		}
		set(ws, h.CostUSD, h.Exact)
		sum += h.CostUSD
		exact = exact && h.Exact
	}
	if all {
		set(&rep.Totals, sum, exact)
	}
}

func savings(name string, cost, base float64) WhatifPolicy {
	p := WhatifPolicy{Policy: name, CostUSD: Round6(cost), SavingsUSD: Round6(base - cost)}
	if base > 0 {
		p.SavingsPct = 100 * (base - cost) / base
	}
	return p
}

// change renders a percentage change, "0%" when it rounds to nothing.
func change(pct float64) string {
	if math.Abs(pct) < 0.5 {
		return "0%"
	}
	return fmt.Sprintf("%+.0f%%", pct)
}

// Table is the report as whatif prints it: a row per session and the total.
func (rep WhatifReport) Table() *Table {
	t := &Table{
		Title:   "What recorded sessions cost, and would have cost ($; savings vs the replay of what happened)",
		Columns: []string{"session", "recorded", "replay", "error"},
		Right:   []bool{false, true, true, true},
		Drop:    []int{0, 0, 0, 2},
	}
	for _, name := range rep.policies {
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
	row := func(ws WhatifSession) {
		rec := "n/a"
		if ws.RecordedUSD != nil {
			rec = FormatUSD(*ws.RecordedUSD, 2)
		}
		errCell := "n/a"
		if ws.ReplayErrorPct != nil {
			errCell = fmt.Sprintf("%+.1f%%", *ws.ReplayErrorPct)
		}
		cells := []string{ws.ID, rec, FormatUSD(ws.ReplayUSD, 2), errCell}
		byName := map[string]WhatifPolicy{}
		for _, p := range ws.Policies {
			byName[p.Policy] = p
		}
		for _, name := range rep.policies {
			p, ok := byName[name]
			if !ok {
				cells = append(cells, "")
				continue
			}
			mark := ""
			if p.WithinError {
				mark = "~"
			}
			cells = append(cells, fmt.Sprintf("%s (%s%s)", FormatUSD(p.CostUSD, 2), mark, change(-p.SavingsPct)))
		}
		cells = append(cells, ws.Best)
		if hs {
			h, r := "", ""
			if ws.HindsightUSD != nil {
				h, r = FormatUSD(*ws.HindsightUSD, 2), FormatUSD(*ws.ReplayRegretUSD, 2)
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
	if hs {
		t.Notes = append(t.Notes, "hindsight: the replay's requests under the cheapest cache schedule; replay regret: what the replayed schedule paid over it (--json has every policy's regret_usd).")
	}
	return t
}

// Round6 rounds to 6 decimals: dollar figures in JSON free of float noise
// (and golden files stable).
func Round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

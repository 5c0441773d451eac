package results

import (
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
	// Unbilled counts the policy's calls that overflowed the window or
	// failed: unbilled, so its cost is not comparable.
	Unbilled int `json:"unbilled_calls,omitempty"`
}

// A WhatifSession is one session (or the total) of a what-if report.
type WhatifSession struct {
	ID string `json:"id"`
	// RecordedUSD is what was billed; ReplayUSD the simulation of it, the
	// base savings are measured from.
	RecordedUSD *float64 `json:"recorded_usd"`
	ReplayUSD   float64  `json:"replay_usd"`
	// ReplayUnbilled counts the replay's calls that overflowed the window
	// or failed: they are in the recorded bill, and not in the replay.
	ReplayUnbilled int `json:"replay_unbilled_calls,omitempty"`
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
	// HindsightBoundUSD is a proven lower bound on hindsight_usd, and
	// GapToBoundPct how far above it the schedule may be (in % of
	// hindsight_usd), when the bound splits per session (a session alone
	// on its account; the total, when every session has one). With a gap
	// open the optimum lies between the two: the text prints the total
	// as that range.
	HindsightBoundUSD *float64 `json:"hindsight_bound_usd,omitempty"`
	GapToBoundPct     *float64 `json:"gap_to_bound_pct,omitempty"`
}

// A WhatifReport prices recorded sessions under other policies against
// the replay of what happened (whatif --json).
type WhatifReport struct {
	// Policies are the compared policies, in column order.
	Policies []string        `json:"-"`
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
	rep := WhatifReport{Policies: policies[1:]}
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
		ws.ReplayUSD, ws.ReplayUnbilled = replay.CostUSD, replay.Overflows+replay.Failed
		if ws.RecordedUSD != nil && *ws.RecordedUSD > 0 {
			e := 100 * (ws.ReplayUSD - *ws.RecordedUSD) / *ws.RecordedUSD
			ws.ReplayErrorPct = &e
		}
		for _, name := range policies[1:] {
			var w WhatifPolicy
			if t := p.At(name, col); t != nil {
				w = savings(name, t.CostUSD, replay.CostUSD)
				w.Unbilled = t.Overflows + t.Failed
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
	} // else no run was billed: nothing is best (every cell failed; it was the baseline, at $0)
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
		// Both rounded first: the optimum is never above the replay, so
		// the regret is never below 0 (an unrounded replay less a rounded
		// optimum printed -0.000001).
		regret := max(0, Round6(Round6(ws.ReplayUSD)-h))
		ws.HindsightUSD, ws.HindsightExact, ws.ReplayRegretUSD = &h, &exact, &regret
		for i := range ws.Policies {
			r := Round6(ws.Policies[i].CostUSD - h)
			ws.Policies[i].RegretUSD = &r
		}
	}
	bound := func(ws *WhatifSession, b float64) {
		b = Round6(b)
		g := GapPct(*ws.HindsightUSD, b)
		ws.HindsightBoundUSD, ws.GapToBoundPct = &b, &g
	}
	sum, bsum, exact, all, bounded := 0.0, 0.0, true, len(rep.Sessions) > 0, true
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
		if h.BoundUSD != nil {
			bound(ws, *h.BoundUSD)
			bsum += *h.BoundUSD
		} else {
			bounded = false
		}
	}
	if all {
		set(&rep.Totals, sum, exact)
		if bounded {
			bound(&rep.Totals, bsum)
		}
	}
}

func savings(name string, cost, base float64) WhatifPolicy {
	p := WhatifPolicy{Policy: name, CostUSD: Round6(cost), SavingsUSD: Round6(base - cost)}
	if base > 0 {
		p.SavingsPct = 100 * (base - cost) / base
	}
	return p
}

// Round6 rounds to 6 decimals: dollar figures in JSON free of float noise
// (and golden files stable).
func Round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

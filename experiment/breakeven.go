package experiment

import (
	"context"
	"math"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
)

// TierCosts prices each recorded root session under whatif's ttl-5m and
// ttl-1h variants, as one account (the sessions' Tenant is set to
// "breakeven"), for ctxsim breakeven's verdict. ok is false when the
// sessions carry no recorded usage.
func (st *Setup) TierCosts(ctx context.Context, sessions []*traces.Session) (cost5m, cost1h map[string]float64, ok bool, err error) {
	for _, s := range sessions {
		s.Tenant = "breakeven"
	}
	tenants := Tenants(sessions)
	if len(tenants) == 0 || !tenants[0].HasRecorded() {
		return nil, nil, false, nil
	}
	var specs []Spec
	for _, n := range []string{"ttl-5m", "ttl-1h"} {
		v, _ := LookupVariant(n)
		specs = append(specs, v.Spec())
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells(tenants, specs)
	if err != nil {
		return nil, nil, false, err
	}
	cost := map[string]map[string]float64{"ttl-5m": {}, "ttl-1h": {}}
	err = st.Run(ctx, cells, 0, func(c *Cell) error {
		if c.Err != nil {
			return c.Err
		}
		for _, r := range c.Result.Runs {
			cost[c.Spec.Name][r.Trace] = r.CostUSD
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	return cost["ttl-5m"], cost["ttl-1h"], true, nil
}

// HindsightGaps replays the sessions with recorded usage under the
// recorded policy on the Anthropic provider and lists, per idle gap over 5
// minutes, what the hindsight optimum of the replay's requests chose
// across it. done, when set, sees every finished cell; a cell that failed
// goes to failed and is counted in the *CellsFailed returned.
func HindsightGaps(ctx context.Context, card *pricing.Card, ss []*traces.Session, done, failed func(*Cell)) ([]report.HindsightGap, error) {
	st, err := NewSetup(card, "anthropic", 1)
	if err != nil {
		return nil, err
	}
	st.Hindsight = true
	st.Memo.Warm(ss)
	cells, err := st.Cells(Tenants(ss), []Spec{Recorded()})
	if err != nil {
		return nil, err
	}
	var out []report.HindsightGap
	err = st.Each(ctx, cells, 0, nil, done, failed, func(c *Cell) {
		if c.Result.Hindsight == nil {
			return
		}
		for _, g := range hindsight.Gaps(c.Result.Tape, c.Result.Hindsight, 5*time.Minute) {
			out = append(out, report.HindsightGap{Session: g.Key, At: g.At.UTC().Format(time.RFC3339), IdleMin: math.Round(g.Idle.Minutes()*10) / 10,
				Choice: g.Choice, Read: g.Read, PolicyRead: g.PolicyRead})
		}
	})
	return out, err
}

package runner

import (
	"context"
	"math"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
)

// Breakeven adds sessions to rep as ctxsim breakeven does: their idle gaps
// and prompt sizes priced at p, or at each call's own model in rn.Prices
// (results.BreakevenReport.AddSessions); the costs of whatif's ttl-5m and
// ttl-1h replays of the recorded ones, which decide the verdict
// (tierCosts: one account); and with hindsight, what the cheapest cache
// schedule chose across each idle gap (hindsightGaps, its cells seen by
// o's Start, Done, Failed and End).
func Breakeven(ctx context.Context, rn *Runner, rep *results.BreakevenReport, sessions []*traces.Session, p pricing.Price, hindsight bool, o Options) error {
	if err := rep.AddSessions(sessions, rn.Prices, p); err != nil {
		return err
	}
	c5, c1, ok, err := rn.tierCosts(ctx, sessions)
	if ok {
		rep.SetReplayCosts(c5, c1)
	}
	if err != nil || !hindsight {
		return err
	}
	gaps, err := hindsightGaps(ctx, rn.Prices, sessions, o)
	rep.Gaps = append(rep.Gaps, gaps...)
	return err
}

// tierCosts prices each recorded root session under whatif's ttl-5m and
// ttl-1h variants, as one account (the sessions' Tenant is set to
// "breakeven"), for ctxsim breakeven's verdict. ok is false when the
// sessions carry no recorded usage; a cell that fails is the error.
func (rn *Runner) tierCosts(ctx context.Context, sessions []*traces.Session) (cost5m, cost1h map[string]float64, ok bool, err error) {
	for _, s := range sessions {
		s.Tenant = "breakeven"
	}
	tenants := Tenants(sessions)
	if len(tenants) == 0 || !tenants[0].HasRecorded() {
		return nil, nil, false, nil
	}
	var pols []Policy
	for _, n := range []string{"ttl-5m", "ttl-1h"} {
		v, _ := LookupVariant(n)
		pols = append(pols, v.Policy())
	}
	rn.Tokens.Warm(sessions)
	plan, err := rn.Plan(ctx, tenants, pols, PlanOptions{})
	if err != nil {
		return nil, nil, false, err
	}
	cost := map[string]map[string]float64{"ttl-5m": {}, "ttl-1h": {}}
	var cellErr error
	err = rn.Run(ctx, plan, RunOptions{Failed: func(c *Cell) {
		if cellErr == nil {
			cellErr = c.Err
		}
	}}, func(c *Cell) {
		for _, r := range c.Result.Runs {
			cost[c.Policy.Name][r.Trace] = r.CostUSD
		}
	})
	if cellErr != nil {
		return nil, nil, false, cellErr
	}
	if err != nil {
		return nil, nil, false, err
	}
	return cost["ttl-5m"], cost["ttl-1h"], true, nil
}

// hindsightGaps replays the sessions with recorded usage under the
// recorded policy on the Anthropic provider and lists, per idle gap over 5
// minutes, what the hindsight optimum of the replay's requests chose
// across it. A cell that failed goes to o.Failed and is counted in the
// *CellsFailed returned.
func hindsightGaps(ctx context.Context, card *pricing.Card, ss []*traces.Session, o Options) ([]results.HindsightGap, error) {
	rn, err := New(card, "anthropic", 1)
	if err != nil {
		return nil, err
	}
	rn.Hindsight = true
	rn.Tokens.Warm(ss)
	plan, err := rn.Plan(ctx, Tenants(ss), []Policy{Recorded()}, PlanOptions{})
	if err != nil {
		return nil, err
	}
	var out []results.HindsightGap
	err = rn.run(ctx, plan, nil, o, &Replay{}, func(c *Cell) {
		if c.Result.Hindsight == nil {
			return
		}
		for _, g := range hindsight.Gaps(c.Result.Tape, c.Result.Hindsight, 5*time.Minute) {
			out = append(out, results.HindsightGap{Session: g.Key, At: g.At.UTC().Format(time.RFC3339), IdleMin: math.Round(g.Idle.Minutes()*10) / 10,
				Choice: g.Choice, Read: g.Read, PolicyRead: g.PolicyRead})
		}
	})
	return out, err
}

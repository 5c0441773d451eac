package harness

import (
	"context"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

// Breakeven adds sessions to rep as ctxsim breakeven does: their idle gaps
// and prompt sizes priced at p, or at each call's own model in st.Prices
// (report.BreakevenReport.AddSessions); the costs of whatif's ttl-5m and
// ttl-1h replays of the recorded ones, which decide the verdict
// (Setup.TierCosts: one account); and with hindsight, what the cheapest
// cache schedule chose across each idle gap (experiment.HindsightGaps, its
// cells seen by o's Start, Done, Failed and End).
func Breakeven(ctx context.Context, st *experiment.Setup, rep *report.BreakevenReport, sessions []*traces.Session, p pricing.Price, hindsight bool, o Options) error {
	if err := rep.AddSessions(sessions, st.Prices, p); err != nil {
		return err
	}
	c5, c1, ok, err := st.TierCosts(ctx, sessions)
	if ok {
		rep.SetReplayCosts(c5, c1)
	}
	if err != nil || !hindsight {
		return err
	}
	defer o.begin(len(experiment.Tenants(sessions)))()
	gaps, err := experiment.HindsightGaps(ctx, st.Prices, sessions, o.Done, o.Failed)
	rep.Gaps = append(rep.Gaps, gaps...)
	return err
}

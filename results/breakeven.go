package results

import (
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

type BreakevenReport struct {
	Model    string              `json:"model"`
	Price    pricing.Price       `json:"price"`
	Tiers    []pricing.Breakeven `json:"tiers"`
	GapMix   *GapMixThreshold    `json:"gap_mix,omitempty"`
	Sessions []SessionVerdict    `json:"sessions,omitempty"`
	Totals   *VerdictTotals      `json:"totals,omitempty"`
	Warnings []traces.Warning    `json:"warnings,omitempty"`
	// Replayed is set when the session costs come from whatif's replays
	// (SetReplayCosts), not the whole-prompt model.
	Replayed bool `json:"replayed,omitempty"`
	// Gaps is what the hindsight optimum chose at each idle gap over 5
	// minutes (breakeven --hindsight).
	Gaps []HindsightGap `json:"hindsight_gaps,omitempty"`
}

// A HindsightGap is one idle gap of a replayed session and how the
// cheapest cache schedule of the replay crossed it (hindsight.Gap).
type HindsightGap struct {
	Session    string  `json:"session"`
	At         string  `json:"at"`
	IdleMin    float64 `json:"idle_min"`
	Choice     string  `json:"choice"`
	Read       int64   `json:"read_tokens"`
	PolicyRead int64   `json:"policy_read_tokens"`
}

type GapMixThreshold struct {
	Growth float64 `json:"growth"`
	Long   float64 `json:"long"`
	// MidBreakeven is the share of gaps in (5 min, 1 h] above which 1h is
	// cheaper.
	MidBreakeven float64 `json:"mid_breakeven"`
}

type SessionVerdict struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	pricing.TTLVerdict
	Verdict string `json:"verdict"`
}

type VerdictTotals struct {
	Sessions  int            `json:"sessions"`
	Calls     int            `json:"calls"`
	Mix       pricing.GapMix `json:"gaps"`
	Cost5m    float64        `json:"cost_5m_usd"`
	Cost1h    float64        `json:"cost_1h_usd"`
	Savings1h float64        `json:"savings_1h_usd"`
	Verdict   string         `json:"verdict"`
}

func NewBreakevenReport(p pricing.Price, growth, long float64) (*BreakevenReport, error) {
	tiers, err := pricing.Breakevens(p)
	if err != nil {
		return nil, err
	}
	rep := &BreakevenReport{Model: p.Model, Price: p, Tiers: tiers}
	if mid, ok := pricing.MidBreakeven(p, long, growth); ok {
		rep.GapMix = &GapMixThreshold{Growth: growth, Long: long, MidBreakeven: mid}
	}
	return rep, nil
}

// AddSessions replays every session with recorded calls at its own model's
// price (def when the session names none).
func (rep *BreakevenReport) AddSessions(ss []*traces.Session, card *pricing.Card, def pricing.Price) error {
	tot := &VerdictTotals{}
	var gaps []time.Duration
	for _, s := range ss {
		var calls []pricing.CallPoint
		model := s.Model
		for _, ev := range s.Events {
			if ev.Kind != traces.Assistant || ev.Usage == nil {
				continue
			}
			if model == "" {
				model = ev.Model
			}
			calls = append(calls, pricing.CallPoint{Time: ev.Time, Prompt: ev.Usage.Prompt()})
		}
		if len(calls) == 0 {
			continue
		}
		p := def
		if model != "" {
			var err error
			if p, err = card.Lookup(model); err != nil {
				return fmt.Errorf("session %s: %w", s.ID, err)
			}
		}
		v, err := pricing.ReplayTTL(p, calls)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		rep.Sessions = append(rep.Sessions, SessionVerdict{ID: s.ID, Model: p.Model, TTLVerdict: v, Verdict: verdict(v.Savings1h)})
		for i := 1; i < len(calls); i++ {
			gaps = append(gaps, calls[i].Time.Sub(calls[i-1].Time))
		}
		tot.Sessions++
		tot.Calls += v.Calls
		tot.Cost5m += v.Cost5m
		tot.Cost1h += v.Cost1h
	}
	if tot.Sessions == 0 {
		return nil
	}
	tot.Mix = pricing.MixOf(gaps)
	tot.Savings1h = tot.Cost5m - tot.Cost1h
	tot.Verdict = verdict(tot.Savings1h)
	rep.Totals = tot
	return nil
}

func verdict(savings1h float64) string {
	switch {
	case savings1h > 0.005:
		return fmt.Sprintf("1h would have saved $%.2f", savings1h)
	case savings1h < -0.005:
		return fmt.Sprintf("5m was cheaper by $%.2f", -savings1h)
	}
	return "no difference"
}

// SetReplayCosts prices each root session's two tiers with the full
// replay, the what-if variants ttl-5m and ttl-1h (its subagents and its
// compaction agent on the same provider, the re-sends its log shows, output
// included), so that the verdict is the one whatif's ttl-1h row gives.
// Rows of sessions without a replay (subagents, which the replay prices
// under their root) are dropped, and the totals are summed again.
func (rep *BreakevenReport) SetReplayCosts(cost5m, cost1h map[string]float64) {
	if rep.Totals == nil {
		return
	}
	kept := rep.Sessions[:0]
	tot := &VerdictTotals{Mix: rep.Totals.Mix}
	for _, s := range rep.Sessions {
		c5, ok5 := cost5m[s.ID]
		c1, ok1 := cost1h[s.ID]
		if !ok5 || !ok1 {
			continue
		}
		s.Cost5m, s.Cost1h, s.Savings1h = c5, c1, c5-c1
		s.Verdict = verdict(s.Savings1h)
		kept = append(kept, s)
		tot.Sessions++
		tot.Calls += s.Calls
		tot.Cost5m += c5
		tot.Cost1h += c1
	}
	rep.Sessions = kept
	rep.Replayed = true
	tot.Savings1h = tot.Cost5m - tot.Cost1h
	tot.Verdict = verdict(tot.Savings1h)
	rep.Totals = tot
}

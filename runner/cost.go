package runner

import (
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/usage"
)

// Cost is ctxsim cost's report on sessions: their calls priced with card
// and grouped by o (usage.CostOf), listing ws, the warnings of the read
// that found them, with a warning for each call CostOf could not price or
// place.
func Cost(sessions []usage.Session, ws *traces.Warnings, card *pricing.Card, o usage.Options) *usage.Cost {
	rep := usage.CostOf(sessions, card, o, ws)
	rep.Warnings = ws.List()
	return rep
}

// joinCost is Join for a sharded cost run: its sessions (usage.MergeShards),
// priced again with the card its shards priced with (prices, a price file
// or "" for the embedded card: SamePrices) and grouped as they grouped.
func joinCost(m *shard.Merged, prices string) (*Joined, error) {
	if err := SamePrices(m.Manifest, prices); err != nil {
		return nil, err
	}
	scan, g, err := usage.MergeShards(m)
	if err != nil {
		return nil, err
	}
	opts, err := g.Options()
	if err != nil {
		return nil, err
	}
	card, err := LoadPrices(prices)
	if err != nil {
		return nil, err
	}
	return &Joined{Command: m.Manifest.Command, Render: g, Cost: Cost(scan.Sessions, scan.Warnings, card, opts), CostOptions: opts, CostWarnings: scan.Warnings}, nil
}

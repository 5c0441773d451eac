package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// Cron runs repeat one large scaffold with a small volatile tail. With the
// scaffold's end registered, the planner marks the scaffold alone and the
// next run within the TTL reads it; without, the mark sits after the
// volatile tail and every run rewrites the scaffold.
func TestScaffoldBoundariesCron(t *testing.T) {
	ss, err := synth.Generate(context.Background(), "cron", 4, 1, synth.Options{})
	require.NoError(t, err)
	tok, err := tiktoken.Get("o200k_base")
	require.NoError(t, err)
	memo := estimate.SharedMemo(tok)
	cost := func(scaffolds bool) (usd float64, read int64) {
		cfg, err := policies.Preset("hermes-default")
		require.NoError(t, err)
		cfg.CacheTTL = "1h" // runs are 15 min to an hour apart
		cfg.ScaffoldBoundaries = scaffolds
		pol, err := NewPolicy(cfg, memo)
		require.NoError(t, err)
		prov := provider.NewAnthropic(provider.AnthropicOptions{})
		res, err := RunTenant(context.Background(), ss, pol, prov, Options{Prices: pricing.Default(), Count: memo.CountHash})
		require.NoError(t, err)
		for _, r := range res {
			for _, rec := range r.Records {
				usd += rec.CostUSD
				read += rec.Usage.CacheRead
			}
		}
		return usd, read
	}
	onUSD, onRead := cost(true)
	offUSD, offRead := cost(false)
	if !(onUSD < 0.7*offUSD) {
		t.Errorf("with scaffold boundaries $%.4f, without $%.4f: want at least 30%% cheaper", onUSD, offUSD)
	}
	if onRead <= offRead {
		t.Errorf("cache reads with boundaries %d, without %d: want more", onRead, offRead)
	}
	// Every run after the first reads the scaffold written by the one
	// before: the sessions share a tenant.
	require.Equal(t, ss[0].TenantID(), ss[3].TenantID())
}

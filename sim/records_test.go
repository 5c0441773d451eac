package sim

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// Records joins a tenant's records in the array RunTenant gave them, in
// session order, exactly as copying them one after the other would; a run
// that outgrew its part, and results not from one RunTenant, are copied.
func TestRecordsJoinsInPlace(t *testing.T) {
	ss, err := synth.Generate(context.Background(), "coding-burst", 4, 1, synth.Options{})
	require.NoError(t, err)
	tok, err := tiktoken.Get("o200k_base")
	require.NoError(t, err)
	memo := estimate.SharedMemo(tok)
	cfg, err := policies.Preset("hermes-default")
	require.NoError(t, err)
	pol, err := NewPolicy(cfg, memo)
	require.NoError(t, err)
	run := func() []*Result {
		res, err := RunTenant(context.Background(), ss, pol, provider.NewAnthropic(provider.AnthropicOptions{}), Options{Prices: pricing.Default(), Count: memo.CountHash})
		require.NoError(t, err)
		return res
	}
	concat := func(res []*Result) []Record {
		var out []Record
		for _, r := range res {
			out = append(out, r.Records...)
		}
		return out
	}

	res := run()
	want := concat(res)
	require.Greater(t, len(want), 4*len(ss))
	slab := &res[0].slab[0]
	got := TakeRecords(res)
	require.Equal(t, want, got)
	require.Same(t, slab, &got[0], "joined in place")
	require.Equal(t, len(got), cap(got))
	for _, r := range res {
		require.Nil(t, r.Records, "handed over")
	}

	// The second run outgrows its part: its records moved out, and the
	// join copies.
	res = run()
	res[1].Records = append(res[1].Records[:len(res[1].Records):len(res[1].Records)], res[1].Records[0])
	want = concat(res)
	got = TakeRecords(res)
	require.Equal(t, want, got)
	require.NotSame(t, &res[0].slab[0], &got[0])

	// One result, and none.
	res = run()
	want = slices.Clone(res[2].Records)
	require.Equal(t, want, TakeRecords(res[2:3]))
	require.Nil(t, TakeRecords(nil))
	require.Nil(t, TakeRecords([]*Result{{}}))
}

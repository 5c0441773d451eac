package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// A compaction memo is a cache of pure functions: replaying long sessions
// with every value computed where it is needed (no memo), with a shared
// memo met for the first time, and with the same memo after it has seen
// every block gives the same records, call by call, under every preset that
// compacts, prunes or masks. So do the engine's other keepsakes, on in the
// shared replays and off in the first: the sessions' block and floor
// hashes and Meta kept across replays (Options.Hashes) and the
// summarizer's prompt counted in parts (CountParts). (The engine always
// shares a session's floor hashes between its builder and estimators;
// estimate.TestSharedFloorHashes checks that sharing.)
func TestSharedMemoSameRecords(t *testing.T) {
	tok, err := tiktoken.Get("o200k_base")
	require.NoError(t, err)
	memo := estimate.SharedMemo(tok)
	var ss []*traces.Session
	for _, p := range []string{"coding-burst", "review", "cron"} {
		s, err := synth.Generate(context.Background(), p, 2, 5, synth.Options{Length: 3})
		require.NoError(t, err)
		ss = append(ss, s...)
	}
	memo.Warm(ss)
	hashes := &BlockHashes{}
	run := func(preset string, shared *compact.Memo) ([]*Result, map[string]int) {
		cfg, err := policies.Preset(preset)
		require.NoError(t, err)
		pol, err := NewPolicy(cfg, memo)
		require.NoError(t, err)
		if shared == nil {
			inner := pol.NewCompactor
			pol.NewCompactor = func(s *traces.Session, m compact.Model, sum compact.Summarizer) (Compactor, error) {
				c, err := inner(s, m, sum)
				if err == nil {
					c.(MemoSharer).ShareMemo(nil)
				}
				return c, err
			}
		}
		opts := Options{Prices: pricing.Default(), Count: memo.CountHash, Memo: shared,
			Summarizer: func(s *traces.Session) compact.Summarizer {
				sum := &Summarizer{Model: s.Model, Count: memo.CountText, Latency: provider.DefaultLatency("anthropic", s.Model)}
				if shared != nil {
					sum.CountParts = memo.CountTexts
				}
				return sum
			}}
		if shared != nil {
			opts.Hashes = hashes
		}
		var out []*Result
		passes := map[string]int{}
		for _, s := range ss {
			res, err := Run(context.Background(), s, pol, provider.NewAnthropic(provider.AnthropicOptions{}), opts)
			require.NoError(t, err)
			out = append(out, res)
			for _, r := range res.Records {
				if r.Kind != KindCall {
					passes[fmt.Sprintf("%s/%s", r.Kind, r.Outcome)]++
				}
			}
		}
		return out, passes
	}
	shared := &compact.Memo{}
	seen := map[string]int{}
	for _, preset := range []string{"hermes-default", "hermes-micro", "hermes-prune", "prune-on-resume", "masking-batched", "masking-sliding", "claude-code"} {
		want, passes := run(preset, nil)
		for k, n := range passes {
			seen[k] += n
		}
		for _, round := range []string{"first", "warm"} {
			got, _ := run(preset, shared)
			require.Equal(t, want, got, "%s, %s replay with the shared memo", preset, round)
		}
	}
	// Every pass that reads the memo ran, committed or not.
	for _, k := range []string{"batch/compacted", "prune/pruned", "prune/below_min_reclaim", "idle/pruned", "micro/absorbed", "masking/masked"} {
		require.Positive(t, seen[k], "no %s pass in the replays: %v", k, seen)
	}
}

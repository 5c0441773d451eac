package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetupCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*Runner)
		want string
	}{
		{func(rn *Runner) { rn.SummarizerFailRate = 1.5 }, "summarizer fail rate 1.5: want 0..1"},
		{func(rn *Runner) { rn.ProviderErrorRate = 1 }, "provider error rate 1: want 0 ≤ rate < 1"},
		{func(rn *Runner) { rn.ClearToolUses, rn.Provider = true, "openai" }, "clear tool uses is an Anthropic feature (provider openai)"},
		{func(rn *Runner) { rn.VLLM.Capacity, rn.VLLM.BlockSize = 8, 16 }, "kv capacity 8, block size 16: want positive sizes, the block no larger than the cache"},
		{func(rn *Runner) { rn.VLLM.Capacity = -1 }, "kv capacity -1, block size 0: want positive sizes, the block no larger than the cache"},
	} {
		rn, err := New(nil, "auto", 1)
		require.NoError(t, err)
		c.edit(rn)
		err = rn.Check()
		var se *InputError
		require.ErrorAs(t, err, &se)
		require.EqualError(t, err, c.want)
		// Plan refuses it too: a library caller who skips Check gets no run.
		_, err = rn.Plan(context.Background(), nil, []Policy{Recorded()}, PlanOptions{})
		require.EqualError(t, err, c.want)
	}
	rn, err := New(nil, "", 1)
	require.NoError(t, err)
	rn.ClearToolUses, rn.SummarizerFailRate, rn.ProviderErrorRate = true, 1, 0.5
	require.NoError(t, rn.Check(), `"" is auto: context editing applies to its Anthropic tenants`)
}

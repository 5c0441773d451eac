package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetupCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*Setup)
		want string
	}{
		{func(st *Setup) { st.SummarizerFailRate = 1.5 }, "--summarizer-fail-rate 1.5: want 0..1"},
		{func(st *Setup) { st.ProviderErrorRate = 1 }, "--provider-error-rate 1: want 0 ≤ rate < 1"},
		{func(st *Setup) { st.ClearToolUses, st.Provider = true, "openai" }, "--clear-tool-uses is an Anthropic feature (--provider openai)"},
		{func(st *Setup) { st.VLLM.Capacity, st.VLLM.BlockSize = 8, 16 }, "--kv-capacity 8, --block-size 16: want positive sizes, the block no larger than the cache"},
		{func(st *Setup) { st.VLLM.Capacity = -1 }, "--kv-capacity -1, --block-size 0: want positive sizes, the block no larger than the cache"},
	} {
		st, err := NewSetup(nil, "auto", 1)
		require.NoError(t, err)
		c.edit(st)
		err = st.Check()
		var se *SpecError
		require.ErrorAs(t, err, &se)
		require.EqualError(t, err, c.want)
		// Cells refuses it too: a library caller who skips Check gets no run.
		_, err = st.Cells(nil, []Spec{Recorded()})
		require.EqualError(t, err, c.want)
	}
	st, err := NewSetup(nil, "", 1)
	require.NoError(t, err)
	st.ClearToolUses, st.SummarizerFailRate, st.ProviderErrorRate = true, 1, 0.5
	require.NoError(t, st.Check(), `"" is auto: context editing applies to its Anthropic tenants`)
}

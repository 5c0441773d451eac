package experiment

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

func TestResolvePolicies(t *testing.T) {
	specs, err := ResolvePolicies([]string{"hermes-micro", "recorded"}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"hermes-micro", "recorded"}, SpecNames(specs))
	require.NotNil(t, specs[0].Config)
	require.Nil(t, specs[1].Config)

	specs, err = ResolvePolicies([]string{"hermes-default"}, []string{"compression.threshold=0.6"})
	require.NoError(t, err)
	v, _ := specs[0].Config.Get("compression.threshold")
	require.Equal(t, "0.6", v)

	// Bad names and settings are the input's fault: a *SpecError.
	for _, c := range []struct {
		names, sets []string
	}{
		{[]string{"no-such-preset"}, nil},
		{[]string{"recorded"}, []string{"compression.threshold=0.6"}},
		{[]string{"hermes-default"}, []string{"no-equals-sign"}},
		{[]string{"hermes-default"}, []string{"compression.threshold=lots"}},
	} {
		_, err := ResolvePolicies(c.names, c.sets)
		var se *SpecError
		require.True(t, errors.As(err, &se), "%v %v: %v", c.names, c.sets, err)
	}
	_, err = WhatifSpecs([]string{"nope"}, nil)
	var se *SpecError
	require.True(t, errors.As(err, &se))
	require.Contains(t, err.Error(), "ttl-1h")

	specs, err = DefaultSpecs([]string{"compression.threshold=0.6"})
	require.NoError(t, err)
	require.NotContains(t, SpecNames(specs), "recorded", "--set does not apply to the recorded policy")
}

// Below a 512K window hermes raises the threshold to 0.75: a value under
// it is named, with how many sessions it clamps on; 0.85 is not.
func TestClampWarnings(t *testing.T) {
	ss := []*traces.Session{{ID: "a", Model: "claude-opus-4-6", Window: 200_000}, {ID: "b", Model: "claude-opus-4-6", Window: 1_000_000}}
	axes := []report.Axis{{Key: "compression.threshold", Values: []string{"0.5", "0.85"}}}
	got := ClampWarnings([]string{"compression.threshold=0.7"}, axes, ss, pricing.Default())
	require.Len(t, got, 2)
	require.Contains(t, got[0], "compression.threshold=0.7 acts as 0.75 on 1 of 2 sessions")
	require.Contains(t, got[1], "compression.threshold=0.5 acts as 0.75")
	require.Empty(t, ClampWarnings(nil, axes, ss[1:], pricing.Default()), "no session under 512K")
}

package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

func TestResolvePolicies(t *testing.T) {
	specs, err := ResolvePolicies([]string{"hermes-micro", "recorded"}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"hermes-micro", "recorded"}, PolicyNames(specs))
	require.NotNil(t, specs[0].Config)
	require.Nil(t, specs[1].Config)

	specs, err = ResolvePolicies([]string{"hermes-default"}, []string{"compression.threshold=0.6"})
	require.NoError(t, err)
	v, _ := specs[0].Config.Get("compression.threshold")
	require.Equal(t, "0.6", v)

	// Bad names and settings are the input's fault: a *InputError.
	for _, c := range []struct {
		names, sets []string
	}{
		{[]string{"no-such-preset"}, nil},
		{[]string{"recorded"}, []string{"compression.threshold=0.6"}},
		{[]string{"hermes-default"}, []string{"no-equals-sign"}},
		{[]string{"hermes-default"}, []string{"compression.threshold=lots"}},
	} {
		_, err := ResolvePolicies(c.names, c.sets)
		var se *InputError
		require.True(t, errors.As(err, &se), "%v %v: %v", c.names, c.sets, err)
	}
	_, err = WhatifPolicies([]string{"nope"}, nil)
	var se *InputError
	require.True(t, errors.As(err, &se))
	require.Contains(t, err.Error(), "ttl-1h")

	specs, err = DefaultPolicies([]string{"compression.threshold=0.6"})
	require.NoError(t, err)
	require.NotContains(t, PolicyNames(specs), "recorded", "--set does not apply to the recorded policy")

	// No names: compare's defaults, whatif's variants.
	specs, err = ComparePolicies(nil, nil)
	require.NoError(t, err)
	defaults, err := DefaultPolicies(nil)
	require.NoError(t, err)
	require.Equal(t, PolicyNames(defaults), PolicyNames(specs))
	specs, err = ComparePolicies([]string{"hermes-micro"}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"hermes-micro"}, PolicyNames(specs))
	specs, err = WhatifPolicies(nil, nil)
	require.NoError(t, err)
	require.Equal(t, VariantNames(), PolicyNames(specs))
}

func TestPolicy(t *testing.T) {
	c, warnings, err := PolicyConfig("hermes-micro", "", []string{"compression.micro_compact_every_n_turns=3"})
	require.NoError(t, err)
	require.Empty(t, warnings)
	v, _ := c.Get("compression.micro_compact_every_n_turns")
	require.Equal(t, "3", v)

	// A file's ignored keys come back as warnings, even with an error.
	file := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(file, []byte("display:\n  compact: true\ncompression:\n  threshold: 0.6\n"), 0o644))
	c, warnings, err = PolicyConfig("", file, nil)
	require.NoError(t, err)
	v, _ = c.Get("compression.threshold")
	require.Equal(t, "0.6", v)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], `config.yaml:1: ignored section "display"`)
	_, warnings, err = PolicyConfig("", file, []string{"compression.threshold=2"})
	var se *InputError
	require.ErrorAs(t, err, &se)
	require.Len(t, warnings, 1)

	_, _, err = PolicyConfig("hermes-turbo", "", nil)
	require.ErrorAs(t, err, &se, "an unknown preset is the input's fault")
	_, _, err = PolicyConfig("", filepath.Join(t.TempDir(), "none.yaml"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.False(t, errors.As(err, &se))
	// ResolvePolicies names the input that gave the file, not as a usage
	// error: the name was right, the file is missing.
	_, err = ResolvePolicies([]string{"none.yaml"}, nil)
	require.ErrorContains(t, err, "policy none.yaml: open none.yaml:")
	require.ErrorAs(t, err, &se)
	require.False(t, se.Usage)
}

// An InputError names its inputs in braces: Error in the runner's words,
// Name in a caller's (the CLI's flags); braces that name no input stay.
func TestInputErrorName(t *testing.T) {
	e := &InputError{Msg: "{grid} x: key is also fixed by {override}; {not an input} and {policy}"}
	require.Equal(t, "grid x: key is also fixed by override; {not an input} and policy", e.Error())
	flag := map[string]string{"grid": "--grid", "override": "--set", "policy": "--policy"}
	require.Equal(t, "--grid x: key is also fixed by --set; {not an input} and --policy", e.Name(func(in string) string { return flag[in] }))
}

// Below a 512K window hermes raises the threshold to 0.75: a value under
// it is named, with how many sessions it clamps on; 0.85 is not.
func TestClampWarnings(t *testing.T) {
	ss := []*traces.Session{{ID: "a", Model: "claude-opus-4-6", Window: 200_000}, {ID: "b", Model: "claude-opus-4-6", Window: 1_000_000}}
	axes := []results.Axis{{Key: "compression.threshold", Values: []string{"0.5", "0.85"}}}
	got := ClampWarnings([]string{"compression.threshold=0.7"}, axes, ss, pricing.Default())
	require.Len(t, got, 2)
	require.Contains(t, got[0], "compression.threshold=0.7 acts as 0.75 on 1 of 2 sessions")
	require.Contains(t, got[1], "compression.threshold=0.5 acts as 0.75")
	require.Empty(t, ClampWarnings(nil, axes, ss[1:], pricing.Default()), "no session under 512K")
}

package runner

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
)

func TestGridPoints(t *testing.T) {
	base, err := policies.Preset("hermes-default")
	require.NoError(t, err)
	axes, err := ParseGrid([]string{
		"compression.threshold=0.5,0.7",
		"compression.model_thresholds.claude-opus-4.6=0.4",
		"prompt_caching.cache_ttl=5m,1h,off",
	}, base)
	require.NoError(t, err)
	pts, err := GridPoints(base, axes)
	require.NoError(t, err)
	var names []string
	for _, p := range pts {
		names = append(names, p.Name)
	}
	want := []string{
		"hermes-default[threshold=0.5,model_thresholds.claude-opus-4.6=0.4,cache_ttl=5m]",
		"hermes-default[threshold=0.5,model_thresholds.claude-opus-4.6=0.4,cache_ttl=1h]",
		"hermes-default[threshold=0.5,model_thresholds.claude-opus-4.6=0.4,cache_ttl=off]",
		"hermes-default[threshold=0.7,model_thresholds.claude-opus-4.6=0.4,cache_ttl=5m]",
		"hermes-default[threshold=0.7,model_thresholds.claude-opus-4.6=0.4,cache_ttl=1h]",
		"hermes-default[threshold=0.7,model_thresholds.claude-opus-4.6=0.4,cache_ttl=off]",
	}
	if !slices.Equal(names, want) {
		t.Errorf("grid names =\n%q\nwant\n%q", names, want)
	}
	if got, _ := pts[4].Config.Get("prompt_caching.cache_ttl"); got != "1h" {
		t.Errorf("cell 4 cache_ttl = %q, want 1h", got)
	}
	if got, _ := pts[4].Config.Get("compression.threshold"); got != "0.7" {
		t.Errorf("cell 4 threshold = %q, want 0.7", got)
	}
	if got := pts[0].Config.Compact.ModelThresholds["claude-opus-4.6"]; got != 0.4 {
		t.Errorf("cell 0 opus threshold = %v, want 0.4", got)
	}
	if base.CacheTTL != "5m" || base.Compact.ModelThresholds["claude-opus-4.6"] != 0 {
		t.Errorf("GridPoints changed its base: %+v", base)
	}
}

func TestParseGridErrors(t *testing.T) {
	base, err := policies.Preset("hermes-default")
	require.NoError(t, err)
	for _, c := range []struct {
		specs []string
		want  string
	}{
		{[]string{"compression.threshold"}, `grid "compression.threshold": want key=v1,v2,...`},
		{[]string{"compression.threshold=0.5", "compression.threshold=0.6"}, "grid compression.threshold: key given twice"},
		{[]string{"compression.threshold=0.5,0.50"}, `grid compression.threshold: values "0.5" and "0.50" are the same setting`},
	} {
		_, err := ParseGrid(c.specs, base)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseGrid(%q) = %v, want %q", c.specs, err, c.want)
		}
	}
}

func TestShortNames(t *testing.T) {
	got := ShortNames([]string{"a.x.mode", "b.mode", "prompt_caching.cache_ttl", "compression.model_thresholds.gpt-4.1", "model"})
	want := []string{"a.x.mode", "b.mode", "cache_ttl", "model_thresholds.gpt-4.1", "model"}
	if !slices.Equal(got, want) {
		t.Errorf("ShortNames = %q, want %q", got, want)
	}
}

func TestNewGrid(t *testing.T) {
	g, err := NewGrid("hermes-micro", []string{"compression.threshold=0.6"}, []string{"prompt_caching.cache_ttl=5m,1h", "compression.micro_compact_every_n_turns=1,5"}, 0)
	require.NoError(t, err)
	require.Equal(t, "hermes-micro", g.Base.Name)
	th, _ := g.Base.Get("compression.threshold")
	require.Equal(t, "0.6", th, "the sets apply to the base before the grid")
	require.Len(t, g.Axes, 2)
	require.Equal(t, []string{
		"hermes-micro[cache_ttl=5m,micro_compact_every_n_turns=1]",
		"hermes-micro[cache_ttl=5m,micro_compact_every_n_turns=5]",
		"hermes-micro[cache_ttl=1h,micro_compact_every_n_turns=1]",
		"hermes-micro[cache_ttl=1h,micro_compact_every_n_turns=5]",
	}, PolicyNames(g.Points))
	r := g.Render()
	require.Equal(t, "hermes-micro", r.Base)
	require.Equal(t, g.Axes, r.Axes)
	require.Equal(t, PolicyNames(g.Points), r.Points)
	for _, c := range []struct {
		policy     string
		sets, grid []string
		want       string
	}{
		{"recorded", nil, []string{"prompt_caching.cache_ttl=5m,1h"}, "policy recorded: the recorded policy has no settings to sweep"},
		// It has no Config to sweep either (this dereferenced nil).
		{"recorded-observed", nil, []string{"prompt_caching.cache_ttl=5m,1h"}, "policy recorded-observed: the recorded policy has no settings to sweep"},
		{"hermes-default", nil, nil, "grid: want at least one key=v1,v2,..."},
		{"hermes-default", []string{"compression.threshold=0.5"}, []string{"compression.threshold=0.6,0.7"}, "grid compression.threshold: key is also fixed by override"},
		{"hermes-default", nil, []string{"compression.threshold"}, `grid "compression.threshold": want key=v1,v2,...`},
	} {
		_, err := NewGrid(c.policy, c.sets, c.grid, 0)
		var se *InputError
		if !errors.As(err, &se) || err.Error() != c.want {
			t.Errorf("NewGrid(%s, %q, %q) = %v, want the InputError %q", c.policy, c.sets, c.grid, err, c.want)
		}
	}
}

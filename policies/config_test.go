package policies

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/traces"
)

func TestLoadHermesConfig(t *testing.T) {
	f, err := os.Open("testdata/hermes-config.yaml")
	require.NoError(t, err)
	defer f.Close()
	c, warnings, err := Load(f, "hermes-config.yaml")
	require.NoError(t, err)

	cc := c.Compact
	checks := []struct {
		key       string
		got, want any
	}{
		{"threshold", cc.Threshold, 0.60},
		{"threshold_tokens", cc.ThresholdTokens, 256_000},
		{"tail_mode", cc.TailMode, "lean"},
		{"proactive_prune_tokens", cc.ProactivePruneTokens, 48_000},
		{"micro_compact", cc.MicroCompact, true},
		{"micro_compact_every_n_turns", cc.MicroCompactEveryNTurns, 2},
		{"idle_compact_after_seconds", cc.IdleCompactAfterSeconds, 1800},
		{"model_thresholds[claude-opus]", cc.ModelThresholds["claude-opus"], 0.70},
		{"model_thresholds[gpt-5]", cc.ModelThresholds["gpt-5"], 0.80},
		{"cache_ttl", c.CacheTTL, "1h"},
		{"auxiliary.compression.model", c.SummaryModel, "google/gemini-2.5-flash"},
		{"default idle action", cc.IdleAction, "summarize"},
		{"default estimator", cc.Estimate, "calibrated"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
	// Unknown sections are one warning each; hermes keys we do not model
	// one per key; every warning names file:line.
	want := []string{
		`hermes-config.yaml:7: ignored section "toolsets": not a context-management setting`,
		`hermes-config.yaml:9: ignored section "terminal": not a context-management setting`,
		`hermes-config.yaml:13: ignored section "memory": not a context-management setting`,
		`hermes-config.yaml:16: ignored section "display": not a context-management setting`,
		`hermes-config.yaml:21: ignored compression.checkpoint_required: hermes setting the simulator does not model`,
	}
	if len(warnings) != 16 {
		t.Errorf("got %d warnings, want 16:\n%s", len(warnings), strings.Join(warnings, "\n"))
	}
	for i, w := range want {
		if i >= len(warnings) || warnings[i] != w {
			t.Errorf("warning %d = %q, want %q", i, at(warnings, i), w)
		}
	}
	if last := at(warnings, len(warnings)-1); last != "hermes-config.yaml:55: ignored unknown key auxiliary.vision" {
		t.Errorf("last warning = %q, want the auxiliary.vision section", last)
	}

	// It builds a manager; the claude-opus override applies with the cap.
	m, err := c.NewManager(compact.Model{Name: "claude-opus-4-1", Window: 200_000}, nil, nil)
	require.NoError(t, err)
	if got := m.Threshold(); got != 150_000 {
		t.Errorf("opus threshold = %d, want 150000 (0.70 raised to 0.75 below 512K)", got)
	}
	m, err = c.NewManager(compact.Model{Name: "gpt-5.5", Window: 1_000_000}, nil, nil)
	require.NoError(t, err)
	if got := m.Threshold(); got != 256_000 {
		t.Errorf("gpt-5.5 threshold = %d, want 256000 (80%% of 1M capped)", got)
	}
}

// TestLoadMaxTokens: hermes takes its output cap from model.max_tokens
// (HERMES_MAX_TOKENS first, then the provider's max_output_tokens; None by
// default) and reserves it from the window before the threshold percent.
func TestLoadMaxTokens(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want int
	}{
		{"model: anthropic/claude-sonnet-4.5\n", 150_000},
		{"model:\n  default: anthropic/claude-sonnet-4.5\n", 150_000},
		{"model:\n  default: anthropic/claude-sonnet-4.5\n  max_tokens: 32000\n", 126_000},
	} {
		c, warnings, err := Load(strings.NewReader(tt.yaml), "c.yaml")
		require.NoError(t, err)
		require.Empty(t, warnings)
		m, err := c.NewManager(compact.Model{Name: "claude-sonnet-4-5", Window: 200_000, MaxOutput: 64_000}, nil, nil)
		require.NoError(t, err)
		if got := m.Threshold(); got != tt.want {
			t.Errorf("%q: threshold %d, want %d", tt.yaml, got, tt.want)
		}
	}
	_, _, err := Load(strings.NewReader("model:\n  max_tokens: lots\n"), "c.yaml")
	require.ErrorContains(t, err, "c.yaml:2: invalid value: model.max_tokens")
}

func at(s []string, i int) string {
	if i < 0 || i >= len(s) {
		return "<none>"
	}
	return s[i]
}

func TestLoadBadInput(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"wrong type", "compression:\n  threshold: \"high\"\n",
			`f.yaml:2: invalid value: compression.threshold: want a number in (0, 1], got "high"`},
		{"quoted number is a string", "compression:\n  protect_last_n: \"20\"\n",
			`f.yaml:2: invalid value: compression.protect_last_n: want an integer ≥ 1, got "20"`},
		{"ratio out of range", "compression:\n  target_ratio: 0.95\n",
			`f.yaml:2: invalid value: compression.target_ratio: want a number in [0.1, 0.8], got "0.95"`},
		{"threshold above 1", "compression:\n  threshold: 1.5\n",
			`f.yaml:2: invalid value: compression.threshold: want a number in (0, 1], got "1.5"`},
		{"unknown preset", "preset: hermes-turbo\n",
			`f.yaml:1: invalid value: preset: want one of no-compaction, hermes-default, hermes-micro, hermes-prune, hermes-idle, prune-on-resume, masking-sliding, masking-batched, claude-code, got "hermes-turbo"`},
		{"bad enum", "masking:\n  mode: always\n",
			`f.yaml:2: invalid value: masking.mode: want one of off, sliding, batched, got "always"`},
		{"negative int", "compression:\n  proactive_prune_tokens: -5\n",
			`f.yaml:2: invalid value: compression.proactive_prune_tokens: want an integer ≥ 0, got "-5"`},
		{"model threshold not a number", "compression:\n  model_thresholds:\n    opus: lots\n",
			`f.yaml:3: invalid value: compression.model_thresholds.opus: want a number in (0, 1], got "lots"`},
		{"a mapping where a value goes", "compression:\n  threshold:\n    value: 0.5\n",
			`f.yaml:3: compression.threshold: want a single value, got a mapping`},
		{"not YAML", "compression: [\n", "f.yaml: yaml: line 1: did not find expected node content"},
		// Issue 10: silently ignored before.
		{"duplicate key", "compression:\n  threshold: 0.5\n  threshold: 0.9\n",
			`f.yaml:3: key "threshold" appears twice in one mapping (first at line 2)`},
		{"duplicate section", "compression:\n  threshold: 0.5\ncompression:\n  threshold: 0.9\n",
			`f.yaml:3: key "compression" appears twice in one mapping (first at line 1)`},
		{"second document", "compression:\n  threshold: 0.5\n---\ncompression:\n  threshold: 0.9\n",
			`f.yaml:3: a second YAML document: a policy file holds one`},
	}
	for _, tt := range tests {
		_, _, err := Load(strings.NewReader(tt.yaml), "f.yaml")
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		var se *traces.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: error %T is not a *traces.SyntaxError", tt.name, err)
		}
		if err.Error() != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, err, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	c := Default()
	// hermes' default cap is above a 200K window: it means min(cap, window).
	if err := c.Validate(200_000); err != nil {
		t.Errorf("default cap on 200K: %v", err)
	}
	c.Compact.ModelThresholds = map[string]float64{"opus": 1.2}
	want := `policies: invalid value: compression.model_thresholds.opus: want a number in (0, 1], got "1.2"`
	if err := c.Validate(200_000); err == nil || err.Error() != want || !errors.Is(err, ErrBadValue) {
		t.Errorf("Validate = %v, want %s", err, want)
	}
	if err := (&Config{}).Validate(0); err == nil {
		t.Error("Validate(zero Config) = nil")
	}
}

func TestSetAndCacheTTL(t *testing.T) {
	c := Default()
	require.NoError(t, c.Set("compression.micro_compact_every_n_turns", "3"))
	require.NoError(t, c.Set("compression.model_thresholds.opus", "0.9"))
	if c.Compact.MicroCompactEveryNTurns != 3 || c.Compact.ModelThresholds["opus"] != 0.9 {
		t.Errorf("Set: every_n = %d, opus = %v", c.Compact.MicroCompactEveryNTurns, c.Compact.ModelThresholds["opus"])
	}
	// An unknown key points to the key list in the package's words; the
	// CLI names it as its flag (package internal/input).
	var ie *input.Error
	if err := c.Set("compression.no_such_key", "1"); !errors.As(err, &ie) || !ie.Usage ||
		ie.Name(func(string) string { return "--keys" }) != `policies: unknown key "compression.no_such_key" (see ctxsim policies --keys)` {
		t.Errorf("Set(unknown key) = %v, want a usage input.Error naming the key list", err)
	}
	for yaml, want := range map[string]string{
		"prompt_caching:\n  cache_ttl: false\n":    "off",
		"prompt_caching:\n  cache_ttl: disabled\n": "off",
		"prompt_caching:\n  cache_ttl: auto\n":     "auto",
		"prompt_caching:\n  cache_ttl: 1h\n":       "1h",
	} {
		c, _, err := Load(strings.NewReader(yaml), "f.yaml")
		require.NoError(t, err, yaml)
		if c.CacheTTL != want {
			t.Errorf("%q: cache_ttl = %q, want %q", yaml, c.CacheTTL, want)
		}
	}
	c2, _, err := Load(strings.NewReader("preset: hermes-micro\ncompression:\n  threshold_tokens: null\n"), "f.yaml")
	require.NoError(t, err)
	if !c2.Compact.MicroCompact || c2.Compact.ThresholdTokens != 0 {
		t.Errorf("preset base + null: micro %v, threshold_tokens %d", c2.Compact.MicroCompact, c2.Compact.ThresholdTokens)
	}
	// JSON is YAML: the same file in JSON loads the same.
	c3, _, err := Load(strings.NewReader(`{"compression": {"threshold": 0.7, "micro_compact": true}, "masking": {"mode": "sliding", "keep_last": 5}}`), "f.json")
	require.NoError(t, err)
	if c3.Compact.Threshold != 0.7 || !c3.Compact.MicroCompact || c3.Compact.Masking.Mode != "sliding" || c3.Compact.Masking.KeepLast != 5 {
		t.Errorf("JSON policy: %+v", c3.Compact)
	}
}

func TestPresets(t *testing.T) {
	names := PresetNames()
	want := []string{"no-compaction", "hermes-default", "hermes-micro", "hermes-prune", "hermes-idle", "prune-on-resume", "masking-sliding", "masking-batched", "claude-code"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("PresetNames = %v, want %v", names, want)
	}
	base := Default()
	for _, c := range Presets() {
		if err := c.Validate(200_000); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if _, err := c.NewManager(compact.Model{Name: "claude-sonnet-4-5", Window: 200_000, MaxOutput: 32_000}, nil, nil); err != nil {
			t.Errorf("%s: NewManager: %v", c.Name, err)
		}
		// Every setting round-trips through Set.
		var r Config = Default()
		for _, s := range c.Settings() {
			require.NoError(t, r.Set(s.Key, s.Value), "%s: %s", c.Name, s.Key)
		}
		if d := r.Diff(&c); len(d) != 0 {
			t.Errorf("%s: round trip differs: %v", c.Name, d)
		}
	}
	hd, _ := Preset("hermes-default")
	if d := hd.Diff(&base); len(d) != 0 {
		t.Errorf("hermes-default differs from Default: %v", d)
	}
	cc, _ := Preset("claude-code")
	m, err := cc.NewManager(compact.Model{Name: "claude-sonnet-4-5", Window: 200_000, MaxOutput: 32_000}, nil, nil)
	require.NoError(t, err)
	if got := m.Threshold(); got != 167_000 {
		t.Errorf("claude-code threshold = %d, want 167000", got)
	}
}

// TestMaxTokensBeyondWindow pins issue 27's "a policy's max_tokens beyond
// the window is silently 0": a reservation that would leave no window is
// an error naming the key, and NaN or Inf in any setting too.
func TestMaxTokensBeyondWindow(t *testing.T) {
	c := Default()
	require.NoError(t, c.Set("model.max_tokens", "300000"))
	err := c.Validate(200_000)
	require.ErrorContains(t, err, `model.max_tokens: want an integer below the model's window (200000), got "300000"`)
	_, err = c.NewManager(compact.Model{Name: "claude-sonnet-4-5", Window: 200_000}, nil, nil)
	require.ErrorContains(t, err, "model.max_tokens")
	require.NoError(t, c.Validate(1_000_000))
	for _, kv := range [][2]string{{"compression.threshold", "NaN"}, {"compression.threshold", "Inf"}, {"compression.target_ratio", "nan"},
		{"compression.model_thresholds.claude", "NaN"}, {"compression.model_thresholds.claude", "+Inf"}} {
		d := Default()
		require.ErrorContains(t, d.Set(kv[0], kv[1]), kv[0]+": want a number", kv)
	}
}

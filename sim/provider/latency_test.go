package provider

import (
	"testing"
	"time"
)

func TestLatencyTime(t *testing.T) {
	l := Latency{Floor: 500 * time.Millisecond, PrefillRate: 10000, CachedRate: 100000, DecodeRate: 50}
	ttft, decode := l.Time(20000, 100000, 100)
	if ttft != 3500*time.Millisecond || decode != 2*time.Second {
		t.Errorf("Time = %v, %v; want 3.5s, 2s", ttft, decode)
	}
	if ttft, decode := (Latency{}).Time(1000, 1000, 1000); ttft != 0 || decode != 0 {
		t.Errorf("zero model: %v, %v", ttft, decode)
	}
}

// The presets reproduce the measurements they were fitted to
// (reference/providers.md §6).
func TestLatencyPresetsFitTheirSources(t *testing.T) {
	gain := func(l Latency, n int) float64 {
		cold, _ := l.Time(n, 0, 0)
		warm, _ := l.Time(0, n, 0)
		return 1 - float64(warm)/float64(cold)
	}
	tests := []struct {
		name     string
		l        Latency
		tokens   int
		min, max float64
	}{
		{"openai 150k: ~67% faster", OpenAILatency, 150000, 0.64, 0.70},
		{"openai 1k: ~7% faster", OpenAILatency, 1024, 0.05, 0.09},
	}
	for _, tt := range tests {
		if g := gain(tt.l, tt.tokens); g < tt.min || g > tt.max {
			t.Errorf("%s: gain %.3f, want in [%.2f, %.2f]", tt.name, g, tt.min, tt.max)
		}
	}
	// Anthropic's book example: 11.5 s → 2.4 s, with ~1.5 s of output on
	// both sides.
	cold, _ := AnthropicLatency.Time(100000, 0, 0)
	warm, _ := AnthropicLatency.Time(0, 100000, 0)
	if got := (cold + 1500*time.Millisecond).Seconds(); got < 11 || got > 12 {
		t.Errorf("anthropic cold 100k + 1.5s output = %.2fs, want ~11.5", got)
	}
	if got := (warm + 1500*time.Millisecond).Seconds(); got < 2.2 || got > 2.6 {
		t.Errorf("anthropic warm 100k + 1.5s output = %.2fs, want ~2.4", got)
	}
}

func TestLatencyPresetsAndDefaults(t *testing.T) {
	for _, n := range []string{"anthropic", "openai", "deepseek", "vllm", "small-instruct", "reasoning"} {
		if _, err := LatencyPreset(n); err != nil {
			t.Errorf("LatencyPreset(%q): %v", n, err)
		}
	}
	if _, err := LatencyPreset("warp"); err == nil {
		t.Error("an unknown preset was accepted")
	}
	s, r := SmallInstructLatency, ReasoningLatency
	if s.DecodeRate <= r.DecodeRate || s.Floor >= r.Floor {
		t.Errorf("small-instruct %+v should be faster than reasoning %+v", s, r)
	}
	if got := DefaultLatency("openai", "gpt-5-mini").DecodeRate; got != 2*OpenAILatency.DecodeRate {
		t.Errorf("mini decode %v, want 2× %v", got, OpenAILatency.DecodeRate)
	}
	if got := DefaultLatency("anthropic", "claude-opus-4-6").DecodeRate; got != 0.7*AnthropicLatency.DecodeRate {
		t.Errorf("opus decode %v", got)
	}
}

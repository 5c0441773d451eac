package compact

import "testing"

func TestThreshold(t *testing.T) {
	tests := []struct {
		name        string
		window, out int
		pct         float64
		cap         int
		want        int
	}{
		{"200K: raised to 75%", 200_000, 0, 0.50, 0, 150_000},
		{"200K less 32K output", 200_000, 32_000, 0.50, 0, 126_000},
		{"200K with the 256K default cap", 200_000, 0, 0.50, 256_000, 150_000},
		{"128K", 128_000, 0, 0.50, 0, 96_000},
		{"128K at 90% stays 90%", 128_000, 0, 0.90, 0, 115_200},
		{"400K: raised to 75%", 400_000, 0, 0.50, 0, 300_000},
		{"1M at 50%", 1_000_000, 0, 0.50, 0, 500_000},
		{"1M capped at 256K", 1_000_000, 0, 0.50, 256_000, 256_000},
		{"512K is not small", 512_000, 0, 0.50, 0, 256_000},
		{"64K: floor reaches the window, 85% fallback", 64_000, 0, 0.50, 0, 54_400},
		{"72K: 75% is below the 64K floor", 72_000, 0, 0.50, 0, 64_000},
		{"cap above the window is min(cap, window)", 100_000, 0, 0.95, 500_000, 95_000},
	}
	for _, tt := range tests {
		if got := Threshold(tt.window, tt.out, tt.pct, tt.cap); got != tt.want {
			t.Errorf("%s: Threshold(%d, %d, %v, %d) = %d, want %d", tt.name, tt.window, tt.out, tt.pct, tt.cap, got, tt.want)
		}
	}
}

func TestClaudeCodeThreshold(t *testing.T) {
	// 200000 − min(32000, 20000) − 13000 = 167000, 83.5% of the window.
	if got := ClaudeCodeThreshold(200_000, 20_000, 0); got != 167_000 {
		t.Errorf("ClaudeCodeThreshold(200K, 20K) = %d, want 167000", got)
	}
	if got := ClaudeCodeThreshold(200_000, 8_000, 0); got != 179_000 {
		t.Errorf("ClaudeCodeThreshold(200K, 8K) = %d, want 179000", got)
	}
}

// TestReserve: hermes reserves its max_tokens, none by default
// (effective_window = context_length - (max_tokens or 0)); Claude Code
// reserves min(max output, 20K). So a 200K window with no max_tokens
// compacts at 150,000 under hermes, whatever the model's max output.
func TestReserve(t *testing.T) {
	hermes := DefaultConfig()
	sent := DefaultConfig()
	sent.MaxTokens = 32_000
	cc := DefaultConfig()
	cc.Rule = RuleClaudeCode
	tests := []struct {
		name                string
		c                   *Config
		window, out         int
		reserve, wantThresh int
	}{
		{"hermes, no max_tokens, 64K max output", &hermes, 200_000, 64_000, 0, 150_000},
		{"hermes, no max_tokens, unknown max output", &hermes, 200_000, 0, 0, 150_000},
		{"hermes, max_tokens 32K", &sent, 200_000, 64_000, 32_000, 126_000},
		{"hermes, max_tokens above the window: full window", &sent, 30_000, 0, 0, 25_500},
		{"claude-code, 64K max output", &cc, 200_000, 64_000, 20_000, 167_000},
		{"claude-code, 8K max output", &cc, 200_000, 8_000, 8_000, 179_000},
		{"claude-code, unknown max output", &cc, 200_000, 0, 20_000, 167_000},
	}
	for _, tt := range tests {
		m, err := New(*tt.c, Model{Name: "claude-sonnet-4-5", Window: tt.window, MaxOutput: tt.out}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Reserve() != tt.reserve || m.Threshold() != tt.wantThresh {
			t.Errorf("%s: reserve %d threshold %d, want %d and %d", tt.name, m.Reserve(), m.Threshold(), tt.reserve, tt.wantThresh)
		}
	}
}

func TestModelThreshold(t *testing.T) {
	o := map[string]float64{"claude": 0.6, "claude-opus": 0.8, "opus": 0.7, "gpt-5": 0.9}
	tests := []struct {
		model string
		want  float64
	}{
		{"claude-opus-4-1", 0.8}, // longest key wins
		{"claude-sonnet-4-5", 0.6},
		{"gpt-5.5", 0.9},
		{"qwen3-coder", 0.5},
	}
	for _, tt := range tests {
		if got := ModelThreshold(o, tt.model, 0.5); got != tt.want {
			t.Errorf("ModelThreshold(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}

func TestBudgets(t *testing.T) {
	if got := MaxSummaryTokens(200_000); got != 10_000 {
		t.Errorf("MaxSummaryTokens(200K) = %d, want 10000", got)
	}
	if got := MaxSummaryTokens(128_000); got != 6_400 {
		t.Errorf("MaxSummaryTokens(128K) = %d, want 6400", got)
	}
	for _, tt := range []struct{ content, window, want int }{
		{5_000, 200_000, 2_000},   // floor
		{30_000, 200_000, 6_000},  // 20%
		{90_000, 200_000, 10_000}, // ceiling
		{90_000, 128_000, 6_400},  // 5% of the window
	} {
		if got := SummaryBudget(tt.content, tt.window); got != tt.want {
			t.Errorf("SummaryBudget(%d, %d) = %d, want %d", tt.content, tt.window, got, tt.want)
		}
	}
	legacy := DefaultConfig()
	legacy.TailMode = TailLegacy
	lean := DefaultConfig()
	for _, tt := range []struct {
		c                       *Config
		window, threshold, want int
	}{
		{&legacy, 200_000, 100_000, 20_000}, // hermes' example: threshold 100K, tail 20K
		{&lean, 200_000, 150_000, 10_000},   // 2.5% = 5K, floored at 10K
		{&lean, 1_000_000, 256_000, 25_000}, // 25K cap
		{&lean, 600_000, 300_000, 15_000},   // 2.5%
		{&lean, 40_000, 30_000, 8_000},      // ≤ 20% of the window
	} {
		if got := TailBudget(tt.c, tt.window, tt.threshold); got != tt.want {
			t.Errorf("TailBudget(%s, %d, %d) = %d, want %d", tt.c.TailMode, tt.window, tt.threshold, got, tt.want)
		}
	}
}

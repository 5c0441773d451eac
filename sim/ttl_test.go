package sim

import (
	"testing"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// The claude-code preset bills like Claude Code on a subscription: the main
// conversation on the 1h tier, subagents on 5m; an API-key user sets
// prompt_caching.cache_ttl=5m (code.claude.com/docs/en/prompt-caching).
func TestClaudeCodePresetTTL(t *testing.T) {
	sub, _ := policies.Preset("claude-code")
	key, _ := policies.Preset("claude-code")
	if err := key.Set("prompt_caching.cache_ttl", "5m"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  policies.Config
		src  traces.Source
		want prompt.TTL
	}{
		{"subscription, main", sub, traces.SourceCLI, prompt.TTL1h},
		{"subscription, subagent", sub, traces.SourceSubagent, prompt.TTL5m},
		{"API key, main", key, traces.SourceCLI, prompt.TTL5m},
		{"API key, subagent", key, traces.SourceSubagent, prompt.TTL5m},
	}
	for _, tt := range tests {
		p, err := NewPolicy(tt.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.TTL(&traces.Session{Source: tt.src}); got != tt.want {
			t.Errorf("%s: TTL %v, want %v", tt.name, got, tt.want)
		}
	}
	bad, _ := policies.Preset("claude-code")
	bad.SubagentCacheTTL = "2h"
	if _, err := NewPolicy(bad, nil); err == nil {
		t.Error("subagent_cache_ttl 2h accepted")
	}
}

package policies

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/policies/compact"
)

type preset struct {
	name, description string
	apply             func(c *Config)
}

// presets in display order: the baseline, hermes' ladder rung by rung, the
// policies hermes lacks, and Claude Code.
var presets = []preset{
	{"no-compaction", "never compacts, prunes or masks: the cost of carrying everything", func(c *Config) {
		c.Compact.Enabled = false
	}},
	{"hermes-default", "hermes-agent's defaults: batch compaction at 50% (≥75% below 512K), capped at 256K, lean tail", func(c *Config) {}},
	{"hermes-micro", "hermes defaults plus micro-compaction every turn (a cache break per turn)", func(c *Config) {
		c.Compact.MicroCompact = true
	}},
	{"hermes-prune", "hermes defaults plus the deterministic prune at 48K tokens, 4096-token reclaim gate", func(c *Config) {
		c.Compact.ProactivePruneTokens = 48_000
	}},
	{"hermes-idle", "hermes defaults plus a batch compaction on resume after 30 minutes idle", func(c *Config) {
		c.Compact.IdleCompactAfterSeconds = 1800
		c.Compact.IdleAction = compact.IdleSummarize
	}},
	{"prune-on-resume", "hermes defaults plus the deterministic prune on a resume whose cache has expired anyway", func(c *Config) {
		c.Compact.IdleCompactAfterSeconds = 300
		c.Compact.IdleAction = compact.IdlePrune
	}},
	{"masking-sliding", "hermes defaults plus observation masking every turn, last 10 observations verbatim", func(c *Config) {
		c.Compact.Masking.Mode = compact.MaskSliding
	}},
	{"masking-batched", "hermes defaults plus observation masking only when it reclaims ≥4096 tokens", func(c *Config) {
		c.Compact.Masking.Mode = compact.MaskBatched
	}},
	{"claude-code", "Claude Code on a subscription: autocompact at window − 20K − 13K, whole-history summary on the cached prefix, its cache layout, 1h tier for the main conversation and 5m for subagents", func(c *Config) {
		c.Compact.Rule = compact.RuleClaudeCode
		c.Compact.ThresholdTokens = 0
		c.Compact.ProtectFirstN = 0
		c.Compact.TailMode = compact.TailLegacy
		c.Compact.TargetRatio = 0.10
		c.Layout = "claude-code"
		c.SummaryFork = true
		// Claude Code writes the main conversation to the 1h tier on a
		// subscription within its plan and subagents to 5m; API-key and
		// over-plan sessions use 5m (prompt_caching.cache_ttl=5m here).
		// Its promptCacheTtl and subagentPromptCacheTtl settings choose
		// (code.claude.com/docs/en/prompt-caching). Three of the four
		// shared recorded sessions bill their main conversation 1h; every
		// recorded subagent bills 5m.
		c.CacheTTL = "1h"
		c.SubagentCacheTTL = "5m"
	}},
}

// PresetNames lists the presets in display order.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.name
	}
	return out
}

// Preset returns a named preset.
func Preset(name string) (Config, error) {
	for _, p := range presets {
		if p.name == name {
			c := Default()
			c.Name, c.Description = p.name, p.description
			p.apply(&c)
			return c, nil
		}
	}
	return Config{}, fmt.Errorf("%w: preset: want one of %s, got %q", ErrBadValue, strings.Join(PresetNames(), ", "), name)
}

// Presets returns every preset in display order.
func Presets() []Config {
	out := make([]Config, 0, len(presets))
	for _, p := range presets {
		c, _ := Preset(p.name)
		out = append(out, c)
	}
	return out
}

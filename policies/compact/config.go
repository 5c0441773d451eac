package compact

// Config is the compaction side of a policy. Field comments give hermes'
// key (under compression: unless noted) and default; DefaultConfig holds the
// defaults. policies.Config reads these from a hermes config.yaml.
type Config struct {
	// Enabled turns batch compaction on (enabled: true).
	Enabled bool
	// Threshold is the trigger as a fraction of the effective window
	// (threshold: 0.50; raised to ≥0.75 below a 512K window).
	Threshold float64
	// Rule is how the threshold is computed (ours, threshold_rule):
	// "hermes" (Threshold) or "claude-code" (ClaudeCodeThreshold, which
	// ignores Threshold and ModelThresholds).
	Rule string
	// MaxTokens is the output cap the harness sends (hermes: the agent's
	// max_tokens, model.max_tokens in config.yaml), reserved from the window
	// before the threshold percent applies. 0 is the provider default,
	// which hermes "conservatively assumes no reservation (full window)":
	// effective_window = context_length - (max_tokens or 0)
	// (agent/context_compressor.py, _compute_threshold_tokens, #43547).
	// The claude-code rule ignores it and reserves min(max output, 20K).
	MaxTokens int
	// ThresholdTokens is an absolute cap on the threshold; 0 means none
	// (threshold_tokens; the newest hermes default is 256000).
	ThresholdTokens int
	// ModelThresholds overrides Threshold per model; the longest key that is
	// a substring of the model name wins (model_thresholds).
	ModelThresholds map[string]float64
	// TargetRatio sizes the legacy tail: threshold × ratio (target_ratio:
	// 0.20, clamped to 0.10–0.80).
	TargetRatio float64
	// TailMode is "lean" (2.5% of the window, 10K–25K) or "legacy"
	// (tail_mode: lean).
	TailMode string
	// ProtectFirstN messages after the system prompt are never compacted
	// until the first compaction (protect_first_n: 3).
	ProtectFirstN int
	// ProtectLastN is the tail by message count for prune, and the count
	// floor of the token tail (protect_last_n: 20).
	ProtectLastN int
	// MinTailUserMessages (min_tail_user_messages: 1).
	MinTailUserMessages int
	// AbortOnSummaryFailure leaves the transcript unchanged when the
	// summarizer fails instead of inserting the fallback summary
	// (abort_on_summary_failure: false).
	AbortOnSummaryFailure bool

	// ProactivePruneTokens triggers the deterministic prune; 0 is off
	// (proactive_prune_tokens: 0; 48000 is hermes' suggested value).
	ProactivePruneTokens int
	// ProactivePruneMinResultChars: tool results longer than this become a
	// one-line summary (proactive_prune_min_result_chars: 8000, floored at
	// 200).
	ProactivePruneMinResultChars int
	// ProactivePruneMinReclaimTokens: a prune commits only if it reclaims
	// at least this (proactive_prune_min_reclaim_tokens: 4096).
	ProactivePruneMinReclaimTokens int

	// MicroCompact turns micro-compaction on (micro_compact: false).
	MicroCompact bool
	// MicroCompactEveryNTurns is the cadence (micro_compact_every_n_turns:
	// 1, clamped ≥1).
	MicroCompactEveryNTurns int
	// MicroCompactDefragThresholdTokens: a rolling summary this large is
	// re-summarized instead of growing (micro_compact_defrag_threshold_tokens:
	// 2000).
	MicroCompactDefragThresholdTokens int
	// MicroCompactMinReclaimTokens (ours; hermes has no such gate): a pass
	// absorbs exchanges only once they hold at least this many tokens, so
	// cache breaks are batched. 0 is off.
	MicroCompactMinReclaimTokens int

	// IdleCompactAfterSeconds: on a resume after this many idle seconds
	// the idle action runs first; 0 is off (idle_compact_after_seconds: 0).
	IdleCompactAfterSeconds int
	// IdleAction (ours) is "summarize" (hermes: a batch compaction),
	// "prune" (the deterministic prune) or "mask" (observation masking with
	// Masking.KeepLast, Claude Code's time-based microcompact); prune and
	// mask act only when the cache is cold anyway.
	IdleAction string

	// Masking is observation masking (ours; OpenHands, The Complexity Trap).
	Masking Masking

	// Estimate names the estimator that drives the triggers (ours,
	// estimate.kind): "rough", "exact" or "calibrated".
	Estimate string
}

// Masking configures observation masking.
type Masking struct {
	// Mode is "off", "sliding" (every turn) or "batched" (only when it
	// reclaims MinReclaimTokens).
	Mode string
	// KeepLast tool observations stay verbatim (masking.keep_last: 10).
	KeepLast int
	// MinReclaimTokens gates the batched variant (masking.min_reclaim_tokens:
	// 4096).
	MinReclaimTokens int
}

// Tail modes, idle actions, masking modes and estimator kinds.
const (
	TailLean   = "lean"
	TailLegacy = "legacy"

	IdleSummarize = "summarize"
	IdlePrune     = "prune"
	IdleMask      = "mask"

	RuleHermes     = "hermes"
	RuleClaudeCode = "claude-code"

	MaskOff     = "off"
	MaskSliding = "sliding"
	MaskBatched = "batched"

	EstimateRough      = "rough"
	EstimateExact      = "exact"
	EstimateCalibrated = "calibrated"
)

// DefaultConfig is hermes-agent's compression defaults (the newest config
// copy, except threshold_tokens, which is 0 here: a cap is a choice, not a
// default every version shares), with our additions off.
func DefaultConfig() Config {
	return Config{
		Enabled:                           true,
		Threshold:                         0.50,
		Rule:                              RuleHermes,
		TargetRatio:                       0.20,
		TailMode:                          TailLean,
		ProtectFirstN:                     3,
		ProtectLastN:                      20,
		MinTailUserMessages:               1,
		ProactivePruneMinResultChars:      8000,
		ProactivePruneMinReclaimTokens:    4096,
		MicroCompactEveryNTurns:           1,
		MicroCompactDefragThresholdTokens: 2000,
		IdleAction:                        IdleSummarize,
		Masking:                           Masking{Mode: MaskOff, KeepLast: 10, MinReclaimTokens: 4096},
		Estimate:                          EstimateCalibrated,
	}
}

// targetRatio is TargetRatio clamped to hermes' 0.10–0.80.
func (c *Config) targetRatio() float64 { return min(max(c.TargetRatio, 0.10), 0.80) }

func (c *Config) pruneMinChars() int { return max(c.ProactivePruneMinResultChars, 200) }

func (c *Config) microEvery() int { return max(c.MicroCompactEveryNTurns, 1) }

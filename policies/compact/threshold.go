package compact

import "strings"

// Threshold constants from hermes' context_compressor.py.
const (
	// SmallWindowLimit: below this window the threshold percent is raised
	// to at least SmallWindowPercent (_SMALL_CTX_WINDOW_LIMIT).
	SmallWindowLimit   = 512_000
	SmallWindowPercent = 0.75
	// MinimumContextLength is the threshold floor (MINIMUM_CONTEXT_LENGTH).
	MinimumContextLength = 64_000
	// MinTriggerRatio is the fallback when the floor reaches the effective
	// window (_MIN_CTX_TRIGGER_RATIO, #14690).
	MinTriggerRatio = 0.85
)

// Threshold is hermes' compaction trigger in tokens for a window, the
// output reservation (hermes' max_tokens, 0 when none is sent), a threshold
// percent and an absolute cap (0 for none):
//
//	pct = max(pct, 0.75) if window < 512K
//	eff = window − maxOutput
//	t   = max(int(eff×pct), 64000)
//	t   = max(1, min(int(eff×0.85), eff−1)) if t ≥ eff
//	t   = min(t, cap, window) if cap > 0
func Threshold(window, maxOutput int, pct float64, capTokens int) int {
	if window < SmallWindowLimit {
		pct = max(pct, SmallWindowPercent)
	}
	eff := window - maxOutput
	t := max(int(float64(eff)*pct), MinimumContextLength)
	if t >= eff {
		t = max(1, min(int(float64(eff)*MinTriggerRatio), eff-1))
	}
	if capTokens > 0 {
		t = min(t, min(capTokens, window))
	}
	return t
}

// Claude Code's autocompact constants (reverse-engineered, see
// ../shared/reference/peers.md). OutputReserve is Claude Code's output
// reservation cap: it reserves min(max output, 20K) before its threshold,
// not the model's largest output (a 128K reservation would halve a 200K
// window). hermes reserves its max_tokens setting instead (see Reserve).
const (
	OutputReserve    = 20_000
	ClaudeCodeBuffer = 13_000
)

// ClaudeCodeThreshold is Claude Code's autocompact trigger: the effective
// window (window − reserve, where Reserve gives min(max output, 20K)) less a
// 13K buffer, ~83.5% of a 200K window; capped like Threshold.
func ClaudeCodeThreshold(window, reserve, capTokens int) int {
	t := max(window-reserve-ClaudeCodeBuffer, 1)
	if capTokens > 0 {
		t = min(t, min(capTokens, window))
	}
	return t
}

// ModelThreshold is hermes' resolve_model_threshold: the override whose key
// is the longest substring of model, else def. Ties go to the key that sorts
// first, so the answer never depends on map order.
func ModelThreshold(overrides map[string]float64, model string, def float64) float64 {
	best, bestKey := def, ""
	found := false
	for k, v := range overrides {
		if !strings.Contains(model, k) {
			continue
		}
		if !found || len(k) > len(bestKey) || (len(k) == len(bestKey) && k < bestKey) {
			best, bestKey, found = v, k, true
		}
	}
	return best
}

// Budget constants of the compressor.
const (
	SummaryTokensCeiling = 10_000 // _SUMMARY_TOKENS_CEILING (some forks 12,000)
	MinSummaryTokens     = 2000   // _MIN_SUMMARY_TOKENS
	SummaryRatio         = 0.20   // _SUMMARY_RATIO
	LeanTailFloor        = 10_000 // LEAN_TAIL_FLOOR_TOKENS
	LeanTailCap          = 25_000 // LEAN_TAIL_CAP_TOKENS
	LeanTailPercent      = 0.025
	// MicroMaxTokens caps a micro pass's summary (the one call hermes sends
	// a max_tokens on).
	MicroMaxTokens = 1500
)

// MaxSummaryTokens is min(int(window×0.05), 10000).
func MaxSummaryTokens(window int) int {
	return min(int(float64(window)*0.05), SummaryTokensCeiling)
}

// SummaryBudget is hermes' _compute_summary_budget: the summary size the
// prompt asks for, max(2000, min(int(content×0.20), max_summary)). It is
// guidance only; hermes sends no max_tokens on a batch summary.
func SummaryBudget(contentTokens, window int) int {
	return max(MinSummaryTokens, min(int(float64(contentTokens)*SummaryRatio), MaxSummaryTokens(window)))
}

// TailBudget is the token budget of the protected tail: legacy mode is
// threshold × target_ratio; lean mode 2.5% of the window clamped to
// 10K–25K. Both are capped at 20% of the window.
func TailBudget(c *Config, window, threshold int) int {
	var b int
	if c.TailMode == TailLegacy {
		b = int(float64(threshold) * c.targetRatio())
	} else {
		b = min(max(int(float64(window)*LeanTailPercent), LeanTailFloor), LeanTailCap)
	}
	return min(b, int(float64(window)*0.20))
}

// Package policies holds the real context-management code an agent harness
// runs, importable by a Go agent and driven by the simulator: cache
// breakpoint planning (cacheplan), token estimation (estimate), the request
// model (prompt) and the compaction ladder (compact). This package ties them
// to one policy Config.
//
// A Config uses hermes-agent's config.yaml key names, so a hermes config
// loads as a policy: compression.* (threshold, threshold_tokens,
// model_thresholds, target_ratio, tail_mode, protect_first_n,
// protect_last_n, proactive_prune_*, micro_compact*,
// idle_compact_after_seconds, ...), prompt_caching.cache_ttl and
// auxiliary.compression.model. Our additions: prompt_caching.layout,
// compression.threshold_rule, compression.idle_action,
// compression.micro_compact_min_reclaim_tokens, masking.* and
// estimate.kind. Keys lists them all with their allowed values.
//
// Typical steps:
//
//	c, err := policies.Preset("hermes-micro")     // or:
//	c, warnings, err := policies.Load(f, "config.yaml")
//	err = c.Set("compression.threshold", "0.6")   // --set overrides
//	err = c.Validate(window)
//	m, err := c.NewManager(model, summarizer, nil) // one per session
//
// Bad input: a wrong type, an out-of-range value, an unknown preset or a
// threshold above the window is an error naming the key and the allowed
// range (file:line when loading a file). Keys the simulator does not know,
// and hermes keys it does not model (locks, timeouts, gateway hygiene),
// are ignored and returned as warnings.
//
// Presets (PresetNames): no-compaction, hermes-default, hermes-micro,
// hermes-prune, hermes-idle, prune-on-resume, masking-sliding,
// masking-batched, claude-code. The claude-code preset approximates Claude
// Code's autocompact with the compact ladder (its summary keeps a small
// legacy tail where Claude Code restores recently read files instead, and
// its breaker trips at 2 strikes where Claude Code's trips at 3), so it
// slightly understates Claude Code's post-compaction prompt.
package policies

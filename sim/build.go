package sim

import (
	"fmt"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/claudecode"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// RecordedName is the policy that replays what the recorded harness did:
// its cache layout, the TTL tier its log shows, and its compactions at their
// recorded boundaries with the recorded continuation summary.
const RecordedName = "recorded"

// RecordedObservedName is the recorded policy that also honours the
// re-sends the log shows and the transcript cannot explain
// (Calibrator.ReadLimit): the baseline what-if variants are priced
// against, since such a break happened whatever the cache policy.
const RecordedObservedName = "recorded-observed"

// NewPolicy builds the engine's policy from a config. memo sizes blocks for
// the compaction ladder's exact estimator.
func NewPolicy(cfg policies.Config, memo *estimate.Memo) (*Policy, error) {
	planner, err := cacheplan.ByName(cfg.Layout)
	if err != nil {
		return nil, fmt.Errorf("policy %s: prompt_caching.layout: %w", cfg.Name, err)
	}
	ttl, err := ttlFunc(cfg.Name, cfg.CacheTTL, cfg.SubagentCacheTTL)
	if err != nil {
		return nil, err
	}
	p := &Policy{Name: cfg.Name, Planner: planner, TTL: ttl, Wire: WireFor(cfg.Layout)}
	p.Wire.SplitScaffolds = cfg.ScaffoldBoundaries
	p.ForkSummary = cfg.SummaryFork
	p.NewCompactor = compactorFunc(cfg, memo, p.Wire.PerMessage)
	p.ObserveResends = true
	return p, nil
}

// ttlFunc is the TTL a policy named name picks per session for the
// prompt_caching.cache_ttl setting ttl and subagent_cache_ttl subTTL.
func ttlFunc(name, ttl, subTTL string) (func(*traces.Session) prompt.TTL, error) {
	if _, err := cacheplan.ChooseTTL(ttl, traces.SourceCLI); err != nil {
		return nil, fmt.Errorf("policy %s: prompt_caching.cache_ttl: %w", name, err)
	}
	if _, err := cacheplan.ChooseSessionTTL(ttl, subTTL, traces.SourceSubagent); err != nil {
		return nil, fmt.Errorf("policy %s: prompt_caching.subagent_cache_ttl: %w", name, err)
	}
	return func(s *traces.Session) prompt.TTL {
		t, _ := cacheplan.ChooseSessionTTL(ttl, subTTL, s.Source)
		return t
	}, nil
}

// compactorFunc builds a session's compaction ladder from cfg, or is nil
// when no rung is on.
func compactorFunc(cfg policies.Config, memo *estimate.Memo, perMessage int) func(*traces.Session, compact.Model, compact.Summarizer) (Compactor, error) {
	if !compacts(cfg.Compact) {
		return nil
	}
	return func(_ *traces.Session, model compact.Model, sum compact.Summarizer) (Compactor, error) {
		return cfg.NewManager(model, sum, estimate.NewExact(memo, perMessage))
	}
}

// compacts reports whether any rung of the ladder is on.
func compacts(c compact.Config) bool {
	return c.Enabled || c.MicroCompact || c.ProactivePruneTokens > 0 || c.IdleCompactAfterSeconds > 0 ||
		(c.Masking.Mode != "" && c.Masking.Mode != compact.MaskOff)
}

// WireFor is the request rendering a layout's harness sends on the
// Anthropic wire. Framing tokens are fitted to the recorded Claude Code
// sessions (see the fidelity report): a message costs a few tokens of role
// framing, and 1–3 tokens after the last block are never cached. Every
// layout renders the same today; the layout is the seam for one that does
// not. Stale thinking is stripped as the Anthropic API does for the
// request's model (prompt.StripsThinking).
func WireFor(layout string) prompt.Wire {
	return prompt.Wire{PerMessage: 3, Tail: 1, SplitScaffolds: true, ThinkingByModel: true}
}

// NewRecorded is the policy that replays a recorded Claude Code session as it
// happened: the claude-code planner, the TTL tier the log shows (latched per
// session from the 5m/1h split of its first write), and the recorded
// compactions.
func NewRecorded() *Policy {
	planner, _ := cacheplan.ByName("claude-code")
	return &Policy{
		Name:       RecordedName,
		Planner:    planner,
		PlannerFor: recordedPlanner,
		TTL:        RecordedTTL,
		Wire:       WireFor("claude-code"),
		Recorded:   true,
	}
}

// NewRecordedObserved is NewRecorded that honours observed re-sends.
func NewRecordedObserved() *Policy {
	p := NewRecorded()
	p.Name = RecordedObservedName
	p.ObserveResends = true
	return p
}

// recordedPlanner marks a recorded session as the Claude Code version that
// wrote it did (claudecode.MessageMarks).
func recordedPlanner(s *traces.Session) cacheplan.Planner {
	return cacheplan.ClaudeCode{Messages: claudecode.MessageMarks(claudecode.VersionOf(s.Harness))}
}

// RecordedTTL is the tier a recorded session's first cache write used: 1h if
// it wrote to the 1h tier, else 5m. Sessions with no recorded writes get 5m,
// the API default.
func RecordedTTL(s *traces.Session) prompt.TTL {
	for i := range s.Events {
		u := s.Events[i].Usage
		if u == nil || u.Writes() == 0 {
			continue
		}
		if u.CacheWrite1h > 0 {
			return prompt.TTL1h
		}
		return prompt.TTL5m
	}
	return prompt.TTL5m
}

// NewRecordedVariant is the recorded policy changed: the TTL tier ttl
// (5m, 1h, auto; empty keeps the recorded tier) and any compaction rung cfg
// turns on, applied on top of the recorded compactions. It answers "what if
// Claude Code had done X as well", keeping everything else as recorded.
func NewRecordedVariant(name string, cfg policies.Config, ttl string, memo *estimate.Memo) (*Policy, error) {
	p := NewRecorded()
	p.Name = name
	if ttl != "" {
		f, err := ttlFunc(name, ttl, "inherit")
		if err != nil {
			return nil, err
		}
		p.TTL = f
	}
	p.NewCompactor = compactorFunc(cfg, memo, p.Wire.PerMessage)
	p.ObserveResends = true
	return p, nil
}

package compact

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
)

// Kind is what a Pass did.
type Kind string

// Pass kinds. They match sim's record kinds one to one.
const (
	KindBatch   Kind = "batch"   // batch compaction at the threshold
	KindMicro   Kind = "micro"   // one micro-compaction pass (or defrag)
	KindPrune   Kind = "prune"   // the deterministic prune
	KindIdle    Kind = "idle"    // the idle action on a resume
	KindMasking Kind = "masking" // observation masking
	KindBreaker Kind = "breaker" // a circuit-breaker decision
	// KindDefrag is only a SummaryInput kind: a micro pass re-summarizing
	// its rolling summary. Its Pass has Kind micro, outcome defrag.
	KindDefrag Kind = "defrag"
)

// A KV is one telemetry field of a pass (and, in the simulator, of a
// record).
type KV struct {
	Key   string  `json:"k"`
	Value float64 `json:"v"`
}

// A Pass is one context-management decision: a compaction, prune, micro or
// masking pass, a deferral, or a breaker transition. The engine turns each
// into a record.
type Pass struct {
	Kind Kind
	// Trigger is what started it: "threshold", "proactive", "cadence",
	// "resume", "sliding", "batched", "overflow", "strike", ...
	Trigger string
	// Outcome is what happened. Passes that changed the view have outcome
	// compacted, fallback, pruned, absorbed, defrag or masked (Committed);
	// the others explain why nothing changed.
	Outcome string
	// TokensBefore and TokensAfter are the rough size of the view.
	TokensBefore, TokensAfter int
	// Summary is the summarizer call, when one was made (also on failure,
	// with what it cost).
	Summary *SummaryOutput
	// Err is the summarizer's error, if it failed.
	Err string
	// Detail is kind-specific telemetry sorted by key (micro-compaction
	// carries hermes' fields).
	Detail []KV
}

// Committed reports whether the pass changed the view.
func (p *Pass) Committed() bool {
	switch p.Outcome {
	case OutcomeCompacted, OutcomeFallback, OutcomePruned, OutcomeAbsorbed, OutcomeDefrag, OutcomeMasked:
		return true
	}
	return false
}

// Outcomes.
const (
	OutcomeCompacted = "compacted"
	OutcomeFallback  = "fallback" // compacted with the deterministic fallback summary
	OutcomePruned    = "pruned"
	OutcomeAbsorbed  = "absorbed"
	OutcomeDefrag    = "defrag"
	OutcomeMasked    = "masked"

	OutcomeDeferred        = "deferred" // over the threshold without an anchor: wait one request
	OutcomeSummaryFailed   = "summary_failed"
	OutcomeSummarizeFailed = "summarize_failed" // micro
	OutcomeDefragFailed    = "defrag_failed"
	OutcomeExchangeSkipped = "exchange_skipped"
	OutcomeBelowReclaim    = "below_min_reclaim"
	OutcomeTooFew          = "too_few_messages"
	OutcomeNoWindow        = "no_compressible_window"
	OutcomeEmptyWindow     = "empty_post_handoff_window"
	OutcomeBelowTarget     = "below_target"
	OutcomeCacheWarm       = "cache_warm"
	OutcomeBlocked         = "blocked"

	OutcomeStrike    = "strike"
	OutcomeCleared   = "cleared"
	OutcomeTripped   = "tripped"
	OutcomeProbation = "probation"
	OutcomeCooldown  = "cooldown"
)

// A Model is what the manager needs to know about the main model.
type Model struct {
	Name string
	// Window is the context window; MaxOutput the model's largest output
	// (the rate card's max_output_tokens; 0 unknown). The reservation the
	// threshold subtracts is the rule's: Config.MaxTokens for hermes,
	// min(MaxOutput, 20K) for Claude Code (see Manager.Reserve).
	Window    int
	MaxOutput int
}

// ErrDoesNotFit reports a session whose floor (system prompt and tool
// schemas) alone does not fit the effective window: no compaction can help,
// so the manager says so instead of compacting forever.
var ErrDoesNotFit = errors.New("compact: the floor (system prompt and tools) does not fit the context window")

// Durable is the state hermes keeps in its session database, which a
// process restart does not reset (#54923).
type Durable struct {
	// Compactions is the number of batch/idle compactions committed.
	Compactions int
	// Ineffective is the breaker's strike count
	// (compression_ineffective_count).
	Ineffective int
	// FallbackStreak counts consecutive fallback summaries
	// (compression_fallback_streak).
	FallbackStreak int
	// CooldownUntil blocks compaction after a summarizer failure
	// (compression_failure_cooldown_until); CooldownStep climbs the 60 →
	// 300 → 900 s ladder.
	CooldownUntil time.Time
	CooldownStep  int
	// MicroPasses and MicroSaved are micro-compaction's running totals
	// (passes_total, tokens_saved_total).
	MicroPasses int
	MicroSaved  int
	// PruneRearm is the proactive prune's rearm mark in MsgBudget tokens
	// of the messages: after a committed prune the next waits until the
	// messages regrow past it; batch compaction clears it
	// (_proactive_prune_rearm_tokens, persisted in sessions.model_config).
	PruneRearm int
}

// memory is the in-process state a restart loses.
type memory struct {
	cursor          int    // micro cursor: index of the first unabsorbed message, -1 none
	cursorMark      uint64 // hash of the message just before cursor, to validate it
	rolling         string // the rolling micro summary
	stamped         uint64 // hash of the batch marker rolling was rehydrated from (superseded by the next absorb)
	failAt          uint64 // hash of the exchange that failed
	failCount       int
	turns           int
	verify          bool      // judge the next billed prompt (the last compaction)
	deferred        bool      // the one-request wait was spent
	deadline        time.Time // probation deadline, armed lazily, not persisted
	structuralUntil time.Time // the structural no-op backoff, not persisted
	overflow        bool      // the provider proved an overflow: ignore the cooldown once
	pruneLen        int       // message count of the last gated-out prune attempt
	maskLen         int       // message count of the last gated-out batched masking
}

// A Manager runs the compaction ladder for one session. It is built from a
// Config and driven by the engine (or a real agent loop) through four hooks
// in call order:
//
//	v, passes = m.OnResume(now, idle, prefixCold, v) // a resume after a gap
//	v, passes, err = m.BeforeCall(now, v)            // before every model call
//	passes = m.AfterResponse(now, v, billed, ok)     // after it
//	v, passes = m.EndOfTurn(now, v)                  // after the turn's last call
//
// Hooks never change the views they are given: a rewrite returns a new view
// (sharing unchanged messages), and no rewrite returns the same pointer.
// A Manager is not safe for concurrent use.
type Manager struct {
	cfg   Config
	model Model
	sum   Summarizer

	rough *estimate.RoughEstimator
	exact *estimate.ExactEstimator
	cal   *estimate.Calibrated

	threshold int
	reserve   int // output tokens reserved from the window
	dur       Durable
	mem       memory
	memo      *Memo // pure functions of block content: neither durable nor volatile state
	budget    estimate.BudgetSummer
}

// New returns a manager for one session of model. sum may be nil when the
// config never summarizes (prune, masking); exact may be nil unless
// cfg.Estimate is "exact".
func New(cfg Config, model Model, sum Summarizer, exact *estimate.ExactEstimator) (*Manager, error) {
	if exact != nil && exact.Memo == nil {
		exact = nil
	}
	if cfg.Estimate == EstimateExact && exact == nil {
		return nil, errors.New("compact: estimate.kind exact needs a tokenizer")
	}
	if model.Window <= 0 {
		return nil, fmt.Errorf("compact: model %q has no context window", model.Name)
	}
	rough := estimate.NewRough()
	m := &Manager{cfg: cfg, sum: sum, rough: rough, exact: exact, cal: estimate.NewCalibrated(rough)}
	// The estimators hash a new floor once between them.
	rough.Floors = &estimate.FloorHashes{}
	if exact != nil {
		exact.Floors = rough.Floors
	}
	m.ShareMemo(&Memo{})
	m.SetModel(model)
	m.mem.cursor = -1
	return m, nil
}

// ShareMemo makes m keep what it derives from block content in mm, which
// other Managers may share (every session of an experiment, say): each
// distinct block is then sized, cut or demoted once for all of them. It
// changes no decision (see Memo); nil keeps nothing. A new Manager has a
// Memo of its own.
func (m *Manager) ShareMemo(mm *Memo) {
	m.memo = mm
	m.rough.Sizes = mm.sizes()
	m.budget.Sizes = mm.sizes()
}

// ShareFloors makes m's estimators hash a new floor through f, which the
// caller shares (the session's prompt Builder, say) or has seeded with
// hashes it kept: a floor is then hashed once for all of them. It changes
// no decision; nil hashes every floor in each estimator.
func (m *Manager) ShareFloors(f *prompt.FloorHashes) {
	m.rough.Floors = f
	if m.exact != nil {
		m.exact.Floors = f
	}
}

// SetModel switches the main model: the threshold (with its model override
// and absolute cap) is recomputed, the anchor no longer matches, and a
// switch to another model clears the breaker's strikes and cooldowns, as
// hermes' update_model does.
func (m *Manager) SetModel(model Model) {
	if m.model.Name != "" && model.Name != m.model.Name {
		m.resetBreaker()
	}
	m.model = model
	m.reserve = Reserve(&m.cfg, model)
	if m.cfg.Rule == RuleClaudeCode {
		m.threshold = ClaudeCodeThreshold(model.Window, m.reserve, m.cfg.ThresholdTokens)
		return
	}
	pct := ModelThreshold(m.cfg.ModelThresholds, model.Name, m.cfg.Threshold)
	m.threshold = Threshold(model.Window, m.reserve, pct, m.cfg.ThresholdTokens)
}

// Reserve is the output reservation c subtracts from model's window: Claude
// Code reserves min(max output, 20K) (20K when the model's is unknown);
// hermes reserves its max_tokens setting, none by default. A reservation
// that leaves no window is dropped, as hermes' effective_window <= 0 falls
// back to the full window.
func Reserve(c *Config, model Model) int {
	r := c.MaxTokens
	if c.Rule == RuleClaudeCode {
		r = OutputReserve
		if model.MaxOutput > 0 {
			r = min(model.MaxOutput, OutputReserve)
		}
	}
	if r < 0 || r >= model.Window {
		return 0
	}
	return r
}

// Reserve is the output reservation in force.
func (m *Manager) Reserve() int { return m.reserve }

// Threshold is the compaction threshold in force.
func (m *Manager) Threshold() int { return m.threshold }

// Durable returns the state that survives a restart.
func (m *Manager) Durable() Durable { return m.dur }

// Restart simulates a harness process restart: in-memory state (the micro
// cursor and rolling summary, the usage anchor, the probation deadline, the
// cadence counter) is lost; Durable is kept.
func (m *Manager) Restart() {
	m.mem = memory{cursor: -1}
	m.cal.Clear()
}

// Estimates are every estimator's reading of v, sorted by name, for the
// engine to record next to the billed prompt.
func (m *Manager) Estimates(v *prompt.View) []estimate.Estimate {
	cal, _ := m.cal.Project(m.model.Name, v)
	out := make([]estimate.Estimate, 0, 3) // by name
	out = append(out, estimate.Estimate{Name: "calibrated", Tokens: cal})
	if m.exact != nil {
		out = append(out, estimate.Estimate{Name: "exact", Tokens: m.exact.Estimate(v)})
	}
	return append(out, estimate.Estimate{Name: "rough", Tokens: m.rough.Estimate(v)})
}

// measure is the trigger estimator's size of v and whether a billed anchor
// backs it.
func (m *Manager) measure(v *prompt.View) (int, bool) {
	switch m.cfg.Estimate {
	case EstimateExact:
		return m.exact.Estimate(v), false
	case EstimateCalibrated:
		return m.cal.Project(m.model.Name, v)
	}
	return m.rough.Estimate(v), false
}

func (m *Manager) floorSize(v *prompt.View) int {
	if m.cfg.Estimate == EstimateExact {
		return m.exact.Floor(v)
	}
	return m.rough.Floor(v)
}

// OnResume runs the idle action when a session resumes after idle. prefixCold
// reports that the provider's cache of the prefix has expired anyway (the
// engine computes it from the TTL in force), which is when the prune action
// acts: a rewrite then breaks no cache that was still warm.
func (m *Manager) OnResume(ctx context.Context, now time.Time, idle time.Duration, prefixCold bool, v *prompt.View) (*prompt.View, []Pass) {
	after := time.Duration(m.cfg.IdleCompactAfterSeconds) * time.Second
	if after <= 0 || idle < after {
		return v, nil
	}
	if m.cfg.IdleAction == IdlePrune || m.cfg.IdleAction == IdleMask {
		if !prefixCold {
			t := m.rough.Estimate(v)
			return v, []Pass{{Kind: KindIdle, Trigger: "resume", Outcome: OutcomeCacheWarm, TokensBefore: t, TokensAfter: t}}
		}
		// The cache is cold: any reclaim is free of cache cost, so the
		// reclaim gate is 1 token.
		if m.cfg.IdleAction == IdleMask {
			nv, p, ok := m.mask(v, "resume", 1)
			if !ok {
				t := m.rough.Estimate(v)
				return v, []Pass{{Kind: KindIdle, Trigger: "resume", Outcome: OutcomeBelowReclaim, TokensBefore: t, TokensAfter: t}}
			}
			p.Kind = KindIdle
			return nv, []Pass{p}
		}
		nv, p := m.prune(v, KindIdle, "resume", 1)
		return nv, []Pass{p}
	}
	tokens, _ := m.measure(v)
	if float64(tokens) <= float64(m.threshold)*m.cfg.targetRatio() {
		return v, []Pass{{Kind: KindIdle, Trigger: "resume", Outcome: OutcomeBelowTarget, TokensBefore: tokens, TokensAfter: tokens}}
	}
	ok, passes := m.gate(now)
	if !ok {
		return v, passes
	}
	nv, ps := m.compress(ctx, now, v, KindIdle, "resume")
	return nv, append(passes, ps...)
}

// BeforeCall runs before every model call: the proactive prune at its
// trigger, batched masking, then batch compaction when the trigger
// estimator crosses the threshold and the breaker allows it. It returns
// ErrDoesNotFit (wrapped) when the floor alone exceeds the effective window,
// and ctx's error when ctx was cancelled during a summary call (which then
// counts as no pass: no strike, no fallback, the view unchanged).
func (m *Manager) BeforeCall(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, []Pass, error) {
	if f, eff := m.floorSize(v), m.model.Window-m.reserve; f >= eff {
		return v, nil, fmt.Errorf("%w: floor %d tokens, effective window %d", ErrDoesNotFit, f, eff)
	}
	var passes []Pass
	if m.cfg.ProactivePruneTokens > 0 && len(v.Messages) != m.mem.pruneLen && afterToolResults(v) {
		if t, _ := m.measure(v); t >= m.cfg.ProactivePruneTokens && m.budget.Sum(v.Messages) >= m.dur.PruneRearm {
			nv, p := m.prune(v, KindPrune, "proactive", m.cfg.ProactivePruneMinReclaimTokens)
			if p.Committed() {
				p = m.rearmPrune(nv, p)
				m.mem.pruneLen = 0
			} else {
				m.mem.pruneLen = len(v.Messages)
			}
			v = nv
			passes = append(passes, p)
		}
	}
	if m.cfg.Masking.Mode == MaskBatched && len(v.Messages) != m.mem.maskLen {
		nv, p, ok := m.mask(v, "batched", max(m.cfg.Masking.MinReclaimTokens, 1))
		if ok {
			v = nv
			passes = append(passes, p)
			m.mem.maskLen = 0
		} else {
			m.mem.maskLen = len(v.Messages)
		}
	}
	if !m.cfg.Enabled {
		return v, passes, nil
	}
	tokens, anchored := m.measure(v)
	if tokens < m.threshold && !m.mem.overflow {
		return v, passes, nil
	}
	if m.cfg.Estimate == EstimateCalibrated && !anchored && !m.mem.deferred && !m.mem.overflow {
		// hermes' should_defer_preflight_to_real_usage: no provider evidence
		// yet, so wait one request for it, even above the whole window.
		m.mem.deferred = true
		return v, append(passes, Pass{Kind: KindBatch, Trigger: "threshold", Outcome: OutcomeDeferred, TokensBefore: tokens, TokensAfter: tokens}), nil
	}
	trigger := "threshold"
	if m.mem.overflow {
		trigger = "overflow"
	}
	ok, ps := m.gate(now)
	m.mem.overflow = false // one bounded attempt, whatever the gate said
	passes = append(passes, ps...)
	if !ok {
		return v, passes, nil
	}
	nv, ps := m.compress(ctx, now, v, KindBatch, trigger)
	return nv, append(passes, ps...), ctx.Err()
}

// AfterResponse is told the billed prompt of the call just made with view v.
// ok is false when the provider rejected the call; billed is then the size
// of the rejected prompt. A rejected prompt at least as large as the
// effective window is a provider-proven overflow: the next BeforeCall
// attempts a batch compaction whatever the estimate says, ignoring the
// failure cooldown (not the breaker) for that one attempt. Other rejections
// (transient errors) change nothing. A response that fit
// re-anchors the calibrated estimator, and the first billed reading after a
// compaction is the breaker's verdict on it.
func (m *Manager) AfterResponse(now time.Time, v *prompt.View, billed int, ok bool) []Pass {
	if !ok {
		if billed >= m.model.Window-m.reserve {
			m.mem.overflow = true
		}
		return nil
	}
	if m.cal.Capture(m.model.Name, v, billed) {
		m.mem.deferred = false
	}
	if billed <= 0 {
		return nil
	}
	if billed < m.threshold {
		cleared := m.mem.verify && m.dur.Ineffective > 0
		m.mem.verify = false
		m.dur.Ineffective = 0
		if cleared {
			return []Pass{{Kind: KindBreaker, Trigger: "verdict", Outcome: OutcomeCleared, TokensBefore: billed, TokensAfter: billed}}
		}
		return nil
	}
	if !m.mem.verify {
		return nil
	}
	m.mem.verify = false
	return m.strike(now, "verdict", billed)
}

// EndOfTurn runs after the last call of a turn: sliding masking, and a
// micro-compaction pass on its cadence.
func (m *Manager) EndOfTurn(ctx context.Context, now time.Time, v *prompt.View) (*prompt.View, []Pass) {
	var passes []Pass
	if m.cfg.Masking.Mode == MaskSliding {
		if nv, p, ok := m.mask(v, "sliding", 1); ok {
			v = nv
			passes = append(passes, p)
		}
	}
	if !m.cfg.MicroCompact {
		return v, passes
	}
	m.mem.turns++
	if m.mem.turns%m.cfg.microEvery() != 0 {
		return v, passes
	}
	nv, p, ran := m.micro(ctx, now, v)
	if ran {
		passes = append(passes, p)
	}
	return nv, passes
}

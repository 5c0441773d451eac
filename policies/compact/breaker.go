package compact

import (
	"time"
)

// Breaker constants (context_compressor.py).
const (
	// TripStrikes ineffective compactions, or as many fallback summaries
	// in a row, open the breaker.
	TripStrikes = 2
	// ProbationAfter is _ANTI_THRASH_RECOVERY_SECONDS (300 s in most
	// copies; one test copy asserts 900 s).
	ProbationAfter = 300 * time.Second
	// StructuralBackoff is _STRUCTURAL_NO_OP_BACKOFF_SECONDS: a compaction
	// that found nothing to compress (too few messages, no compressible
	// window, only summaries in it) defers the next attempt this long
	// instead of striking the breaker, which would latch auto-compaction
	// off on a short session (agent/context_compressor.py
	// _record_structural_no_op, #93022, #40803).
	StructuralBackoff = 300 * time.Second
)

// cooldownLadder is the summary-failure cooldown: 60 → 300 → 900 s.
//
// Simplification: hermes climbs this ladder for timeouts (408/429/502/504)
// and uses a flat 60 s for other errors and 30 s for decode errors; the
// simulated summarizer fails only with timeouts, so every failure climbs.
var cooldownLadder = [...]time.Duration{60 * time.Second, 300 * time.Second, 900 * time.Second}

func (m *Manager) tripped() bool {
	return m.dur.Ineffective >= TripStrikes || m.dur.FallbackStreak >= TripStrikes
}

// gate decides whether a compaction may run now: the failure cooldown
// (skipped once after a provider-proven overflow), the structural no-op
// backoff (which an overflow does not skip), then the breaker with its
// lazily armed probation deadline; hermes checks them in that order
// (_compression_block_reason, _automatic_compression_blocked_locally).
func (m *Manager) gate(now time.Time) (bool, []Pass) {
	if now.Before(m.dur.CooldownUntil) && !m.mem.overflow {
		return false, nil
	}
	if now.Before(m.mem.structuralUntil) {
		return false, nil
	}
	if !m.tripped() {
		return true, nil
	}
	if m.mem.deadline.IsZero() {
		// Armed when first found tripped; not persisted, so a restart waits
		// a fresh window rather than disarming the guard (#14694).
		m.mem.deadline = now.Add(ProbationAfter)
		return false, []Pass{{Kind: KindBreaker, Trigger: "tripped", Outcome: OutcomeBlocked,
			Detail: []KV{{"probation_in_s", ProbationAfter.Seconds()}}}}
	}
	if now.Before(m.mem.deadline) {
		return false, nil
	}
	// Probation: one strike left, so one more ineffective pass re-trips.
	m.dur.Ineffective = min(m.dur.Ineffective, TripStrikes-1)
	m.dur.FallbackStreak = min(m.dur.FallbackStreak, TripStrikes-1)
	m.mem.deadline = time.Time{}
	return true, []Pass{{Kind: KindBreaker, Trigger: "deadline", Outcome: OutcomeProbation}}
}

// strike records one ineffective compaction and reports the breaker
// decisions it caused.
func (m *Manager) strike(now time.Time, trigger string, tokens int) []Pass {
	m.dur.Ineffective++
	ps := []Pass{{Kind: KindBreaker, Trigger: trigger, Outcome: OutcomeStrike, TokensBefore: tokens, TokensAfter: tokens,
		Detail: []KV{{"ineffective", float64(m.dur.Ineffective)}}}}
	return append(ps, m.tripPass(trigger)...)
}

func (m *Manager) tripPass(trigger string) []Pass {
	if m.dur.Ineffective == TripStrikes && m.dur.FallbackStreak < TripStrikes ||
		m.dur.FallbackStreak == TripStrikes && m.dur.Ineffective < TripStrikes {
		m.mem.deadline = time.Time{}
		return []Pass{{Kind: KindBreaker, Trigger: trigger, Outcome: OutcomeTripped,
			Detail: []KV{{"fallback_streak", float64(m.dur.FallbackStreak)}, {"ineffective", float64(m.dur.Ineffective)}}}}
	}
	return nil
}

// summaryFailed arms the failure cooldown.
func (m *Manager) summaryFailed(now time.Time) Pass {
	d := cooldownLadder[min(m.dur.CooldownStep, len(cooldownLadder)-1)]
	m.dur.CooldownStep++
	m.dur.CooldownUntil = now.Add(d)
	return Pass{Kind: KindBreaker, Trigger: "summary_failure", Outcome: OutcomeCooldown,
		Detail: []KV{{"cooldown_s", d.Seconds()}}}
}

// structuralNoOp arms the structural backoff: in memory only (a restart
// clears it), re-arming slides the deadline, no counter moves.
func (m *Manager) structuralNoOp(now time.Time) []KV {
	m.mem.structuralUntil = now.Add(StructuralBackoff)
	return []KV{{"backoff_s", StructuralBackoff.Seconds()}}
}

// resetBreaker is what hermes' update_model does to the guards on a model
// switch: the strikes, the fallback streak, the failure cooldown and the
// probation deadline were verdicts on the old model (and its window), so
// they are cleared.
func (m *Manager) resetBreaker() {
	m.dur.Ineffective, m.dur.FallbackStreak = 0, 0
	m.dur.CooldownUntil, m.dur.CooldownStep = time.Time{}, 0
	m.mem.deadline = time.Time{}
}

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
// (skipped once after a provider-proven overflow), then the breaker with its
// lazily armed probation deadline.
func (m *Manager) gate(now time.Time) (bool, []Pass) {
	if now.Before(m.dur.CooldownUntil) && !m.mem.overflow {
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

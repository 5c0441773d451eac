package pricing

import (
	"fmt"
	"math"
	"time"
)

// Cache tiers' lifetimes. An entry lives this long after its last use (a
// hit refreshes it at no charge).
const (
	TTL5m = 5 * time.Minute
	TTL1h = time.Hour
)

// A Breakeven is where caching a prefix at one TTL tier pays for itself.
//
// Send a prefix of T tokens n times. Uncached, every send pays the input
// rate: n·T·in. Cached, the first send writes (w·in per token) and the n−1
// others read (r·in): T·in·(w + (n−1)·r). They cost the same at
//
//	n* = (w − r) ÷ (1 − r)
//
// sends, the writing one included; that is n* − 1 = (w − 1) ÷ (1 − r) reuses
// after the write. At Anthropic's multiples (5m write 1.25, 1h write 2.0,
// read 0.1): n* = 1.28 for 5m and 2.11 for 1h, so one reuse already pays for
// a 5m write and two pay for a 1h write.
type Breakeven struct {
	TTL string `json:"ttl"`
	// WriteMultiple and ReadMultiple are w and r: the write and read rates
	// in multiples of the input rate.
	WriteMultiple float64 `json:"write_multiple"`
	ReadMultiple  float64 `json:"read_multiple"`
	// Uses is n*, Reuses n* − 1. Both are 0 when Pays is false.
	Uses   float64 `json:"breakeven_uses"`
	Reuses float64 `json:"breakeven_reuses"`
	// MinUses is the fewest whole sends at which the cached prefix is
	// strictly cheaper.
	MinUses int `json:"min_uses"`
	// Pays is false when reads are no cheaper than input, so caching never
	// pays.
	Pays bool `json:"pays"`
}

// Breakevens returns the break-even of each cache tier p prices (5m, then
// 1h when p has a 1h rate). It fails when p has no input rate.
func Breakevens(p Price) ([]Breakeven, error) {
	if p.Input <= 0 {
		return nil, fmt.Errorf("pricing: %s has no input rate, so the break-even is undefined", p.Model)
	}
	tiers := []struct {
		ttl   string
		write float64
	}{{"5m", p.CacheWrite5m}, {"1h", p.CacheWrite1h}}
	var out []Breakeven
	for _, t := range tiers {
		if t.write <= 0 {
			continue
		}
		b := Breakeven{TTL: t.ttl, WriteMultiple: t.write / p.Input, ReadMultiple: p.CacheRead / p.Input}
		if b.ReadMultiple < 1 {
			b.Pays = true
			b.Uses = (b.WriteMultiple - b.ReadMultiple) / (1 - b.ReadMultiple)
			b.Reuses = b.Uses - 1
			// Strictly cheaper from the first whole n above n*.
			b.MinUses = max(int(math.Floor(b.Uses+1e-9))+1, 1)
		}
		out = append(out, b)
	}
	return out, nil
}

// CumulativeCost is the cost, in multiples of T·input, of sending a prefix of
// T tokens n times: uncached (n), or cached at write multiple w and read
// multiple r (w + (n−1)·r). n = 0 costs 0.
func CumulativeCost(n int, w, r float64) float64 {
	if n <= 0 {
		return 0
	}
	return w + float64(n-1)*r
}

// A GapMix is the share of gaps between consecutive calls of a session that
// fall in each band: at most 5 minutes (both tiers hit), in (5 min, 1 h]
// (only 1h hits), and over an hour (both miss).
type GapMix struct {
	Short float64 `json:"short"`
	Mid   float64 `json:"mid"`
	Long  float64 `json:"long"`
	Gaps  int     `json:"gaps"`
}

// MixOf sorts gaps into bands. A gap equal to a TTL still hits.
func MixOf(gaps []time.Duration) GapMix {
	var m GapMix
	for _, g := range gaps {
		switch {
		case g <= TTL5m:
			m.Short++
		case g <= TTL1h:
			m.Mid++
		default:
			m.Long++
		}
	}
	m.Gaps = len(gaps)
	if m.Gaps > 0 {
		n := float64(m.Gaps)
		m.Short, m.Mid, m.Long = m.Short/n, m.Mid/n, m.Long/n
	}
	return m
}

// CallCost is the expected cost of one call, in multiples of P·input, for a
// session that reuses a P-token prefix and appends growth·P new tokens per
// call, when the gap before the call is gap, under tier ttl (TTL5m or
// TTL1h). A hit reads the prefix and writes the new tokens; a miss writes
// both.
func CallCost(p Price, ttl, gap time.Duration, growth float64) float64 {
	w, r := p.CacheWrite5m/p.Input, p.CacheRead/p.Input
	if ttl == TTL1h {
		w = p.CacheWrite1h / p.Input
	}
	if gap <= ttl {
		return r + growth*w
	}
	return (1 + growth) * w
}

// MidBreakeven is the share of gaps in (5 min, 1 h] above which the 1h tier
// is cheaper than 5m, for a session whose gaps are over an hour in a share
// long of cases and which appends growth·P new tokens to a P-token prefix
// per call (see CallCost). Per call and per P·input, 5m minus 1h is
//
//	mid·(w5 − r) − (long + growth)·(w1 − w5)
//
// since a mid gap costs 5m a rewrite that 1h reads, and every write (new
// tokens, rewrites after long gaps) costs 1h its premium. So 1h wins when
//
//	mid > (long + growth)·(w1 − w5) ÷ (w5 − r).
//
// The result may exceed 1 − long, in which case 1h never wins. ok is false
// when p has no 1h tier or a 5m write is no dearer than a read.
func MidBreakeven(p Price, long, growth float64) (mid float64, ok bool) {
	if p.Input <= 0 || p.CacheWrite1h <= 0 {
		return 0, false
	}
	w5, w1, r := p.CacheWrite5m/p.Input, p.CacheWrite1h/p.Input, p.CacheRead/p.Input
	if w5 <= r {
		return 0, false
	}
	return (long + growth) * (w1 - w5) / (w5 - r), true
}

// A CallPoint is one recorded call, as the TTL replay sees it: when it was
// sent and its billed prompt size.
type CallPoint struct {
	Time   time.Time
	Prompt int64
}

// A TTLVerdict is a session replayed under an all-5m and an all-1h cache.
type TTLVerdict struct {
	Calls int    `json:"calls"`
	Mix   GapMix `json:"gaps"`
	// Cost5m and Cost1h are the prompt cost under each tier (output tokens
	// cost the same under both and are left out).
	Cost5m float64 `json:"cost_5m_usd"`
	Cost1h float64 `json:"cost_1h_usd"`
	// Savings1h is Cost5m − Cost1h: positive when 1h would have been
	// cheaper.
	Savings1h float64 `json:"savings_1h_usd"`
	// Rewrites5m and Rewrites1h count calls that found their prefix expired.
	Rewrites5m int `json:"rewrites_5m"`
	Rewrites1h int `json:"rewrites_1h"`
	// Growth is the new prompt tokens per call as a share of the previous
	// prompt, token-weighted: Σ max(Pᵢ − Pᵢ₋₁, 0) ÷ Σ Pᵢ₋₁.
	Growth float64 `json:"growth"`
	// MidBreakeven is MidBreakeven at this session's long-gap share and
	// growth: 1h pays when Mix.Mid exceeds it.
	MidBreakeven float64 `json:"mid_breakeven"`
}

// ReplayTTL replays calls (in time order) under each tier. The model: every
// call caches its whole prompt, and the next call reads the previous prompt
// if it arrives within the TTL and writes the rest; a call after the TTL, or
// with a prompt shorter than the previous one (the history was rewritten,
// e.g. compacted), writes its whole prompt. This ignores the floor that
// survives a compaction and the provider's minimum cacheable length and
// block lookback, which bill the same under both tiers except for the write
// premium, so it slightly overstates the 1h premium after compactions. It
// fails when p has no 1h tier.
func ReplayTTL(p Price, calls []CallPoint) (TTLVerdict, error) {
	if p.CacheWrite1h <= 0 || p.CacheWrite5m <= 0 {
		return TTLVerdict{}, fmt.Errorf("pricing: %s has no 5m and 1h cache tiers to compare", p.Model)
	}
	v := TTLVerdict{Calls: len(calls)}
	var gaps []time.Duration
	tally := func(ttl time.Duration, w float64, rewrites *int) float64 {
		var usd float64
		for i, c := range calls {
			var cached int64
			if i > 0 {
				prev := calls[i-1]
				if c.Time.Sub(prev.Time) <= ttl && c.Prompt >= prev.Prompt {
					cached = prev.Prompt
				} else {
					*rewrites++
				}
			}
			usd += (float64(cached)*p.CacheRead + float64(c.Prompt-cached)*w) / 1e6
		}
		return usd
	}
	var grown, base int64
	for i := 1; i < len(calls); i++ {
		gaps = append(gaps, calls[i].Time.Sub(calls[i-1].Time))
		grown += max(calls[i].Prompt-calls[i-1].Prompt, 0)
		base += calls[i-1].Prompt
	}
	v.Mix = MixOf(gaps)
	if base > 0 {
		v.Growth = float64(grown) / float64(base)
	}
	v.MidBreakeven, _ = MidBreakeven(p, v.Mix.Long, v.Growth)
	v.Cost5m = tally(TTL5m, p.CacheWrite5m, &v.Rewrites5m)
	v.Cost1h = tally(TTL1h, p.CacheWrite1h, &v.Rewrites1h)
	v.Savings1h = v.Cost5m - v.Cost1h
	return v, nil
}

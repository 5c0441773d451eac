package traces

import (
	"errors"
	"math"
	"strconv"
)

// MaxCallTokens bounds one token count of one call. The largest context
// window on sale is 10^6-10^7 tokens (2025-2026), so 10^9 is two orders of
// magnitude of headroom; a count above it is damage, and left in it would
// swamp (or, summed, wrap) every total it reaches.
const MaxCallTokens = 1_000_000_000

// Warning reasons of CheckCount, CheckAnthropic and CheckOpenAI. Each says
// how the count was resolved, so that a total is never silently short.
const (
	WarnNegativeTokens   = "kept usage with a negative token count (counted as 0)"
	WarnFractionTokens   = "kept usage with a non-integer token count (rounded down)"
	WarnHugeTokens       = "kept usage with a token count that is not a number or over 10^9 for one call (counted as 0)"
	WarnNoSplit          = "kept usage without cache_creation split (counted as 5m writes)"
	WarnSplitMismatch    = "kept cache_creation split that does not add up to its total (the total counts; the rest is 5m)"
	WarnCachedOverPrompt = "kept usage with more cached tokens than prompt tokens (cached capped at the prompt)"
	WarnUsageConflict    = "kept the most complete of conflicting usage lines for one call (largest output)"
)

// CheckCount checks one token count as a log states it. Counts are decoded
// as float64 so that fractions and values past int64 are seen rather than
// failing the whole line; every value that passes is below 2^53 and exact.
// It returns the count to use and a Warn* reason, "" when the count is fine.
func CheckCount(v float64) (int64, string) { return CheckCountUpTo(v, MaxCallTokens) }

// CheckCountUpTo is CheckCount with another bound, for counts that sum
// many calls (a session's totals).
func CheckCountUpTo(v float64, limit int64) (int64, string) {
	switch {
	case math.IsNaN(v), math.IsInf(v, 0), v > float64(limit):
		return 0, WarnHugeTokens
	case v < 0:
		return 0, WarnNegativeTokens
	case v != math.Trunc(v):
		return int64(v), WarnFractionTokens
	}
	return int64(v), ""
}

// Count is a token count as a log states it: any JSON value. A number is
// kept as is (fractions and values past int64 included, for CheckCount to
// judge); anything else is NaN, which CheckCount reports; null is 0.
// Decoding never fails, so one bad count cannot cost a whole line.
type Count float64

// UnmarshalJSON implements json.Unmarshaler.
func (c *Count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		f = math.NaN()
	}
	*c = Count(f)
	return nil
}

// RawAnthropic is an Anthropic usage block before checking:
// input_tokens, cache_creation_input_tokens, cache_read_input_tokens,
// output_tokens and the cache_creation split, when present (HasSplit).
type RawAnthropic struct {
	Input, CacheCreation, CacheRead, Output float64
	HasSplit                                bool
	W5m, W1h                                float64
}

// CheckAnthropic turns u into a Usage, calling warn with a reason for each
// thing it had to resolve. cache_creation_input_tokens is the billed total
// (ccusage counts it too): a split that is missing puts it all in 5m; a
// split that does not add up keeps the total, its 1h part capped at the
// total and the rest 5m.
func CheckAnthropic(u RawAnthropic, warn func(reason string)) Usage {
	count := func(v float64) int64 {
		n, r := CheckCount(v)
		if r != "" {
			warn(r)
		}
		return n
	}
	out := Usage{Input: count(u.Input), CacheRead: count(u.CacheRead), Output: count(u.Output)}
	total := count(u.CacheCreation)
	if !u.HasSplit {
		if total > 0 {
			warn(WarnNoSplit)
		}
		out.CacheWrite5m = total
		return out
	}
	w5, w1 := count(u.W5m), count(u.W1h)
	switch {
	case w5+w1 == total:
		out.CacheWrite5m, out.CacheWrite1h = w5, w1
	case w5+w1 == 0:
		// Versions that log the split object before filling it.
		warn(WarnNoSplit)
		out.CacheWrite5m = total
	default:
		warn(WarnSplitMismatch)
		out.CacheWrite1h = min(w1, total)
		out.CacheWrite5m = total - out.CacheWrite1h
	}
	return out
}

// CheckOpenAI turns OpenAI-shaped usage (prompt tokens that include the
// cached and written ones) into the additive form. Cached plus written
// tokens over the prompt are capped at the prompt, reads first.
func CheckOpenAI(prompt, cached, written, output float64, warn func(reason string)) Usage {
	count := func(v float64) int64 {
		n, r := CheckCount(v)
		if r != "" {
			warn(r)
		}
		return n
	}
	p, c, wr, o := count(prompt), count(cached), count(written), count(output)
	if c+wr > p {
		warn(WarnCachedOverPrompt)
		c = min(c, p)
		wr = min(wr, p-c)
	}
	return Usage{Input: p - c - wr, CacheRead: c, CacheWrite5m: wr, Output: o}
}

// MoreComplete reports whether b should replace a as the usage of one call
// logged more than once. A streamed response is logged with partial output
// counts and then the final one, so the largest output wins; ties go to the
// larger prompt, then to the field-wise larger usage, so the choice never
// depends on line order.
func MoreComplete(a, b Usage) bool {
	if a.Output != b.Output {
		return b.Output > a.Output
	}
	if a.Prompt() != b.Prompt() {
		return b.Prompt() > a.Prompt()
	}
	for _, p := range [][2]int64{{a.Input, b.Input}, {a.CacheWrite5m, b.CacheWrite5m}, {a.CacheWrite1h, b.CacheWrite1h}, {a.CacheRead, b.CacheRead}} {
		if p[0] != p[1] {
			return p[1] > p[0]
		}
	}
	return false
}

// Conflicting reports whether two usages of one call disagree on more than
// the output count (which grows while a response streams): the prompt side
// of a response is fixed when it starts.
func Conflicting(a, b Usage) bool {
	a.Output, b.Output = 0, 0
	return a != b
}

// addSat is x+y saturated at the int64 bounds: a sum never wraps.
func addSat(x, y int64) int64 {
	s := x + y
	switch {
	case x > 0 && y > 0 && s < 0:
		return math.MaxInt64
	case x < 0 && y < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

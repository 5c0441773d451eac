package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// thresholdKey is the setting hermes clamps: below a 512K window it raises
// compression.threshold to at least 0.75 (context_compressor.py,
// _SMALL_CTX_WINDOW_LIMIT; see policies/compact.Threshold).
const thresholdKey = "compression.threshold"

// ClampWarnings names each compression.threshold a user gave (by --set or
// --grid) below 0.75 that acts as 0.75 on some of the sessions, whose
// window is under 512K: two such values give identical results there.
func ClampWarnings(sets []string, axes []results.Axis, sessions []*traces.Session, card *pricing.Card) []string {
	var vals []string
	for _, s := range sets {
		if k, v, ok := strings.Cut(s, "="); ok && strings.TrimSpace(k) == thresholdKey {
			vals = append(vals, strings.TrimSpace(v))
		}
	}
	for _, a := range axes {
		if a.Key == thresholdKey {
			vals = append(vals, a.Values...)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	small := 0
	for _, s := range sessions {
		w := s.Window
		if w == 0 {
			if p, err := card.Lookup(s.Model); err == nil {
				w = p.Window
			}
		}
		if w > 0 && w < compact.SmallWindowLimit {
			small++
		}
	}
	if small == 0 {
		return nil
	}
	var out []string
	for _, v := range vals {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f >= compact.SmallWindowPercent {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s acts as %.2f on %d of %d sessions: hermes raises the threshold to at least %.2f below a %dK window, so values under %.2f give identical results there",
			thresholdKey, v, compact.SmallWindowPercent, small, len(sessions), compact.SmallWindowPercent, compact.SmallWindowLimit/1000, compact.SmallWindowPercent))
	}
	return out
}

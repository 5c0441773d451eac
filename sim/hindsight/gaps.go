package hindsight

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// A Gap is an idle gap between two consecutive calls of one conversation,
// and what a schedule did across it.
type Gap struct {
	Key string
	// At is the send time of the call after the gap; Idle the gap.
	At   time.Time
	Idle time.Duration
	// Read is what the call after the gap read under the optimum, and
	// PolicyRead under the policy's schedule.
	Read, PolicyRead int64
	// Choice is how the optimum crossed the gap: "5m" or "1h" (the tier
	// of the entry the call after it read: only a 1h entry outlives a gap
	// over 5 minutes), or "none" (it read nothing and wrote the prefix
	// again, or sent it uncached); "unknown" if no call of the tape wrote
	// what it read.
	Choice string
}

// Gaps lists the gaps of at least least between consecutive non-Fixed calls
// of each key in calls, with what res's schedule chose across each.
func Gaps(calls []Call, res *Result, least time.Duration) []Gap {
	last := map[string]int{}
	var out []Gap
	for j := range calls {
		c := &calls[j]
		if c.Fixed {
			continue
		}
		i, ok := last[c.Key]
		last[c.Key] = j
		if !ok {
			continue
		}
		idle := c.Time.Sub(calls[i].Time)
		if idle < least {
			continue
		}
		g := Gap{Key: c.Key, At: c.Time, Idle: idle, Read: res.Usage[j].CacheRead, PolicyRead: res.PolicyUsage[j].CacheRead, Choice: "none"}
		if g.Read > 0 {
			g.Choice = tierRead(calls, res, j)
		}
		out = append(out, g)
	}
	return out
}

// tierRead is the tier of the entry call j read under res's schedule:
// that of the latest earlier write, in the schedule, of the prefix through
// the block j read up to.
func tierRead(calls []Call, res *Result, j int) string {
	c := &calls[j]
	read := int(res.Usage[j].CacheRead)
	for k := range c.Blocks {
		if c.Blocks[k].End != read {
			continue
		}
		chain := c.Blocks[k].Chain
		for i := j - 1; i >= 0; i-- {
			p := &calls[i]
			if !p.has(int32(k), chain) {
				continue
			}
			for _, bp := range res.Schedule[i] {
				// A mark past what that call read wrote the entry.
				if bp.Block == k && int64(p.Blocks[k].End) > res.Usage[i].CacheRead {
					return tierName(bp.TTL)
				}
			}
		}
	}
	return "unknown" // another tenant's write, which the tape does not hold
}

func tierName(t prompt.TTL) string { return t.String() }

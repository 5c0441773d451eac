package hindsight

import (
	"math"
	"slices"
	"time"
)

// segments returns where calls split into pieces no cache entry spans: the
// first call of each piece. A piece ends where every later call is sent
// after every entry written or refreshed so far has expired: an entry
// lives at most an hour (the longest TTL; a revived one 5m) from its
// writer's response start, or from a refreshing read, which is a call's
// send time, earlier still. Response starts are bounded by each call's
// slowest TTFT (no hit, or a hit through its last block; the latency is
// linear in both) or its observed start.
func segments(calls []Call, opts Options) ([]int, error) {
	cuts := []int{0}
	if len(calls) < 2 {
		return cuts, nil
	}
	lat := map[string]rules{}
	after := make([]int64, len(calls)+1) // the earliest send time of calls k and later
	after[len(calls)] = math.MaxInt64
	for k := len(calls) - 1; k >= 0; k-- {
		after[k] = min(after[k+1], calls[k].Time.UnixNano())
	}
	alive := int64(math.MinInt64) // no entry of the calls so far lives past it
	for k := range calls {
		c := &calls[k]
		r, ok := lat[c.Model]
		if !ok {
			var err error
			if r, err = opts.rules(c.Model); err != nil {
				return nil, err
			}
			lat[c.Model] = r
		}
		l := r.lat.Started(c.Started)
		hit := 0
		if n := len(c.Blocks); n > 0 {
			hit = max(0, min(c.Blocks[n-1].End, c.Total))
		}
		a, _ := l.Time(c.Total, 0, c.Output)
		b, _ := l.Time(c.Total-hit, hit, c.Output)
		alive = max(alive, c.Time.UnixNano()+int64(max(a, b)+time.Hour))
		if k+1 < len(calls) && after[k+1] >= alive {
			cuts = append(cuts, k+1)
		}
	}
	return cuts, nil
}

// join is the result of a tape from those of its segments, in order:
// their sums and concatenations. The schedules tried (for Separate) are
// joined by name, a segment that did not try one taking its own best.
func join(parts []*Result) *Result {
	res := &Result{Exact: true}
	var names []string
	for _, p := range parts {
		res.BoundUSD += p.BoundUSD
		res.SearchUSD += p.SearchUSD
		res.Capped += p.Capped
		res.peak = max(res.peak, p.peak)
		res.skipped += p.skipped
		res.Exact = res.Exact && p.Exact
		res.Schedule = append(res.Schedule, p.Schedule...)
		res.Usage = append(res.Usage, p.Usage...)
		res.Cost = append(res.Cost, p.Cost...)
		res.PolicyUsage = append(res.PolicyUsage, p.PolicyUsage...)
		res.PolicyCost = append(res.PolicyCost, p.PolicyCost...)
		switch {
		case res.Source == "":
			res.Source = p.Source
		case res.Source != p.Source:
			res.Source = "segments"
		}
		for _, c := range p.cands {
			if !slices.Contains(names, c.name) {
				names = append(names, c.name)
			}
		}
	}
	// Summed call by call, as a replay of the whole tape sums them.
	res.CostUSD, res.PolicyUSD = sum(res.Cost), sum(res.PolicyCost)
	res.BoundUSD = min(res.BoundUSD, res.CostUSD)
	for _, name := range names {
		var c cand
		c.name = name
		for _, p := range parts {
			k := slices.IndexFunc(p.cands, func(c cand) bool { return c.name == name })
			if k < 0 {
				c.sch, c.usage, c.cost = append(c.sch, p.Schedule...), append(c.usage, p.Usage...), append(c.cost, p.Cost...)
				continue
			}
			x := &p.cands[k]
			c.sch, c.usage, c.cost = append(c.sch, x.sch...), append(c.usage, x.usage...), append(c.cost, x.cost...)
		}
		res.cands = append(res.cands, c)
	}
	return res
}

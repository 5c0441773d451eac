package hindsight

import (
	"fmt"
	"math"
	"slices"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Replay bills schedule (one breakpoint list per call) on calls through a
// fresh fake Anthropic provider with opts' rules, and returns each call's
// usage and cost (0 for Fixed calls). It is how Solve's answer is checked:
// the provider, not the search, says what a schedule costs.
func Replay(calls []Call, schedule [][]prompt.Breakpoint, opts Options) ([]traces.Usage, []float64, error) {
	if len(schedule) != len(calls) {
		return nil, nil, fmt.Errorf("hindsight: %d schedules for %d calls", len(schedule), len(calls))
	}
	p := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: opts.Prices, Latency: opts.Latency}})
	us := make([]traces.Usage, len(calls))
	cost := make([]float64, len(calls))
	var buf []prompt.Block
	for i := range calls {
		c := &calls[i]
		r, err := opts.rules(c.Model)
		if err != nil {
			return nil, nil, err
		}
		buf = buf[:0]
		for _, b := range c.Blocks {
			buf = append(buf, prompt.Block{Chain: b.Chain, End: b.End, Cacheable: b.Cacheable})
		}
		req := &prompt.Request{Model: c.Model, Key: c.Key, Blocks: buf, Total: c.Total, Output: c.Output, Breakpoints: schedule[i], ReadLimit: c.ReadLimit, Limited: c.Limited, Window: c.Window}
		resp, err := p.Send(c.Time, req)
		if err != nil {
			return nil, nil, fmt.Errorf("hindsight: call %d: %w", i, err)
		}
		us[i] = resp.Usage
		if !c.Fixed {
			cost[i] = r.price.Cost(resp.Usage)
		}
	}
	return us, cost, nil
}

// variant is the policy's schedule with every breakpoint's TTL set to ttl
// (NoCache: no breakpoints), on the calls the caller controls.
func variant(calls []Call, ttl prompt.TTL, keep bool) [][]prompt.Breakpoint {
	out := make([][]prompt.Breakpoint, len(calls))
	for i := range calls {
		c := &calls[i]
		switch {
		case c.Fixed || keep:
			out[i] = c.Policy
		case ttl == prompt.NoCache:
		default:
			out[i] = make([]prompt.Breakpoint, len(c.Policy))
			for j, bp := range c.Policy {
				out[i][j] = prompt.Breakpoint{Block: bp.Block, TTL: ttl}
			}
		}
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// finish replays the search's schedule, and the policy's with each TTL, and
// keeps the cheapest; then bounds it.
func (s *solver) finish(res *Result, exact bool) (*Result, error) {
	var err error
	if res.Usage, res.Cost, err = Replay(s.calls, res.Schedule, s.opts); err != nil {
		return nil, err
	}
	res.CostUSD = sum(res.Cost)
	res.SearchUSD = res.CostUSD
	res.cands = append(res.cands, cand{"search", res.Schedule, res.Usage, res.Cost})
	for _, v := range []struct {
		name string
		ttl  prompt.TTL
		keep bool
	}{{"policy", 0, true}, {"policy-5m", prompt.TTL5m, false}, {"policy-1h", prompt.TTL1h, false}, {"none", prompt.NoCache, false}} {
		sch := variant(s.calls, v.ttl, v.keep)
		us, cost, err := Replay(s.calls, sch, s.opts)
		if err != nil {
			return nil, err
		}
		c := sum(cost)
		res.cands = append(res.cands, cand{v.name, sch, us, cost})
		if v.keep {
			res.PolicyUSD, res.PolicyUsage, res.PolicyCost = c, us, cost
		}
		if c < res.CostUSD {
			res.CostUSD, res.Schedule, res.Usage, res.Cost, res.Source = c, sch, us, cost, v.name
		}
	}
	if err := s.perKeyTTL(res); err != nil {
		return nil, err
	}
	res.BoundUSD = s.bound()
	if tol := 1e-9 * math.Max(1, res.CostUSD); res.BoundUSD > res.CostUSD+tol {
		return nil, fmt.Errorf("hindsight: bound $%.9f above a schedule billed $%.9f (a bug)", res.BoundUSD, res.CostUSD)
	} else if res.BoundUSD > res.CostUSD {
		res.BoundUSD = res.CostUSD // the same sum rounded in another order
	}
	res.Exact = exact || res.CostUSD-res.BoundUSD <= 1e-9*math.Max(1, res.CostUSD)
	return res, nil
}

// mix gives each group of calls the candidate schedule that bills its
// calls least (the joint search's best can be another group's gain),
// replays the mixture, and keeps it if it bills no more in total.
func mix(calls []Call, res *Result, group func(key string) string, opts Options) (bool, error) {
	split := func(cost []float64) map[string]float64 {
		m := map[string]float64{}
		for i := range calls {
			if !calls[i].Fixed {
				m[group(calls[i].Key)] += cost[i]
			}
		}
		return m
	}
	cur := split(res.Cost)
	pick := map[string]int{} // group → candidate index, -1: the current schedule
	better := false
	for g := range cur {
		pick[g] = -1
		best := cur[g]
		for k, c := range res.cands {
			if v := split(c.cost)[g]; v < best-1e-12*math.Max(1, best) {
				best, pick[g], better = v, k, true
			}
		}
	}
	if !better {
		return false, nil
	}
	sch := make([][]prompt.Breakpoint, len(calls))
	for i := range calls {
		sch[i] = res.Schedule[i]
		if k := pick[group(calls[i].Key)]; !calls[i].Fixed && k >= 0 {
			sch[i] = res.cands[k].sch[i]
		}
	}
	us, cost, err := Replay(calls, sch, opts)
	if err != nil {
		return false, err
	}
	if c := sum(cost); c <= res.CostUSD {
		// No more in total: an optimal schedule stays optimal.
		res.Schedule, res.Usage, res.Cost, res.CostUSD = sch, us, cost, c
		res.Source += "+mixed"
		return true, nil
	}
	return false, nil
}

// Separate makes res's schedule fair to each group of calls (a session and
// its subagents, on an account several sessions share): a joint optimum
// may shift a shared write onto one group, billing it more than the
// policy's schedule did. While some group's calls cost more under
// res.Schedule than under the policy's, that group's calls take the
// policy's breakpoints and the tape is replayed again; at worst every
// group is back on the policy's schedule. It reports whether it changed
// anything (res.Exact is then false: the result is a feasible schedule,
// no longer the joint optimum).
func Separate(calls []Call, res *Result, group func(key string) string, opts Options) (bool, error) {
	changed, err := mix(calls, res, group, opts)
	if err != nil {
		return changed, err
	}
	policy := map[string]bool{}
	for {
		over := ""
		got, want := map[string]float64{}, map[string]float64{}
		var names []string
		for i := range calls {
			if calls[i].Fixed {
				continue
			}
			g := group(calls[i].Key)
			if _, ok := got[g]; !ok {
				names = append(names, g)
			}
			got[g] += res.Cost[i]
			want[g] += res.PolicyCost[i]
		}
		for _, g := range names {
			if !policy[g] && got[g] > want[g]+1e-12*math.Max(1, want[g]) {
				over = g
				break
			}
		}
		if over == "" {
			return changed, nil
		}
		policy[over], changed = true, true
		sch := make([][]prompt.Breakpoint, len(calls))
		for i := range calls {
			sch[i] = res.Schedule[i]
			if !calls[i].Fixed && policy[group(calls[i].Key)] {
				sch[i] = calls[i].Policy
			}
		}
		us, cost, err := Replay(calls, sch, opts)
		if err != nil {
			return changed, err
		}
		res.Schedule, res.Usage, res.Cost, res.CostUSD = sch, us, cost, sum(cost)
		res.Exact, res.Source = false, res.Source+"+separate"
	}
}

// maxPerKey caps the conversations perKeyTTL tries one by one (a replay
// each).
const maxPerKey = 64

// perKeyTTL tries the policy's layout with one TTL per conversation (a
// harness that picks 1h for the human-paced session and 5m for its
// subagents, as hermes' auto tier does): from all 5m, each conversation in
// turn switches to 1h when that bills less, replayed. It keeps the result
// if it beats res.
func (s *solver) perKeyTTL(res *Result) error {
	var keys []string
	for i := range s.calls {
		if k := s.calls[i].Key; !s.calls[i].Fixed && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 || len(keys) > maxPerKey {
		return nil // one conversation: policy-5m and policy-1h cover it
	}
	long := map[string]bool{}
	build := func() [][]prompt.Breakpoint {
		sch := variant(s.calls, prompt.TTL5m, false)
		for i := range s.calls {
			if c := &s.calls[i]; !c.Fixed && long[c.Key] {
				sch[i] = make([]prompt.Breakpoint, len(c.Policy))
				for j, bp := range c.Policy {
					sch[i][j] = prompt.Breakpoint{Block: bp.Block, TTL: prompt.TTL1h}
				}
			}
		}
		return sch
	}
	bestSch := build()
	bestUs, bestCost, err := Replay(s.calls, bestSch, s.opts)
	if err != nil {
		return err
	}
	best := sum(bestCost)
	for _, k := range keys {
		long[k] = true
		sch := build()
		us, cost, err := Replay(s.calls, sch, s.opts)
		if err != nil {
			return err
		}
		if c := sum(cost); c < best {
			best, bestSch, bestUs, bestCost = c, sch, us, cost
		} else {
			long[k] = false
		}
	}
	res.cands = append(res.cands, cand{"policy-per-conversation", bestSch, bestUs, bestCost})
	if best < res.CostUSD {
		res.CostUSD, res.Schedule, res.Usage, res.Cost, res.Source = best, bestSch, bestUs, bestCost, "policy-per-conversation"
	}
	return nil
}

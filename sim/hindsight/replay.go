package hindsight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Replay bills schedule (one breakpoint list per call) on calls through a
// fresh fake Anthropic provider with opts' rules, and returns each call's
// usage and cost (0 for Fixed calls). It is how Solve's answer is checked:
// the provider, not the search, says what a schedule costs.
func Replay(calls []Call, schedule [][]prompt.Breakpoint, opts Options) ([]traces.Usage, []float64, error) {
	return newReplayer(calls, opts).replay(schedule)
}

// A replayer replays one tape under several schedules (Solve replays the
// search's and the policy's variants): each call's blocks are converted
// to the provider's once, and a call that extends, repeats or shortens
// the one before shares its conversion, as Tape shares the calls' blocks.
type replayer struct {
	calls  []Call
	opts   Options
	blocks [][]prompt.Block
	rules  map[string]rulesOrErr
}

type rulesOrErr struct {
	r   rules
	err error
}

func newReplayer(calls []Call, opts Options) *replayer {
	r := &replayer{calls: calls, opts: opts, blocks: make([][]prompt.Block, len(calls)), rules: map[string]rulesOrErr{}}
	// dst is the conversion of src, the longest run of blocks since the
	// last divergence.
	var src []Block
	var dst []prompt.Block
	for i := range calls {
		bs := calls[i].Blocks
		n := commonPrefix(bs, src)
		if n < len(bs) && n < len(src) {
			// A divergence: a new run, with the common prefix. Earlier
			// calls keep the old one.
			dst, src = append(make([]prompt.Block, 0, len(bs)), dst[:n]...), src[:n]
		}
		if len(bs) > len(src) {
			for _, b := range bs[len(src):] {
				dst = append(dst, prompt.Block{Chain: b.Chain, End: b.End, Cacheable: b.Cacheable})
			}
			src = bs
		}
		r.blocks[i] = dst[:len(bs):len(bs)]
	}
	return r
}

// commonPrefix is the number of leading blocks a and b share.
func commonPrefix(a, b []Block) int {
	n := min(len(a), len(b))
	if n > 0 && &a[0] == &b[0] {
		return n // the same storage (Call.Blocks is never written)
	}
	for k := range n {
		if a[k] != b[k] {
			return k
		}
	}
	return n
}

func (r *replayer) rulesFor(model string) (rules, error) {
	x, ok := r.rules[model]
	if !ok {
		o := r.opts // rules fills in a nil rate card; the provider gets opts as given
		x.r, x.err = o.rules(model)
		r.rules[model] = x
	}
	return x.r, x.err
}

// replay bills schedule through a fresh fake Anthropic provider (Replay).
func (r *replayer) replay(schedule [][]prompt.Breakpoint) ([]traces.Usage, []float64, error) {
	calls, opts := r.calls, r.opts
	if len(schedule) != len(calls) {
		return nil, nil, fmt.Errorf("hindsight: %d schedules for %d calls", len(schedule), len(calls))
	}
	p := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: opts.Prices, Latency: opts.Latency}})
	defer p.Release() // its cache maps serve the next replay
	us := make([]traces.Usage, len(calls))
	cost := make([]float64, len(calls))
	for i := range calls {
		c := &calls[i]
		rl, err := r.rulesFor(c.Model)
		if err != nil {
			return nil, nil, err
		}
		req := &prompt.Request{Model: c.Model, Key: c.Key, Blocks: r.blocks[i], Total: c.Total, Output: c.Output, Breakpoints: schedule[i], ReadLimit: c.ReadLimit, Limited: c.Limited, KeepAlive: c.KeepAlive, KeptAlive: c.KeptAlive, ReadTokens: c.ReadTokens, ReadInside: c.ReadInside, Window: c.Window, Started: c.Started}
		resp, err := p.Send(c.Time, req)
		if err != nil {
			return nil, nil, fmt.Errorf("hindsight: call %d: %w", i, err)
		}
		us[i] = resp.Usage
		if !c.Fixed {
			cost[i] = rl.price.Cost(resp.Usage)
		}
	}
	return us, cost, nil
}

// variant is the policy's schedule with every breakpoint's TTL set to ttl
// (NoCache: no breakpoints), or the policy's own (keep). A Fixed call (the
// engine's prewarm) takes the variant's tier too, as the engine sends it
// with the session's TTL.
func variant(calls []Call, ttl prompt.TTL, keep bool) [][]prompt.Breakpoint {
	out := make([][]prompt.Breakpoint, len(calls))
	for i := range calls {
		c := &calls[i]
		switch {
		case keep:
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

// finish replays the segment's joint schedule (the policy's when no joint
// search ran), and the policy's with each TTL, and keeps the cheapest;
// then bounds it.
func (s *solver) finish(ctx context.Context, g *segment) (*Result, error) {
	if g.err != nil {
		return nil, g.err
	}
	res, exact := g.joint, g.exact
	if res == nil {
		// Many conversations under way at once: the joint search's beam,
		// shared by all of them, finds less than each solved alone
		// (perKeySearch) in more time.
		res, exact = &Result{Schedule: variant(s.calls, 0, true), Source: "policy"}, false
	}
	rp := newReplayer(s.calls, s.opts)
	var err error
	if res.Usage, res.Cost, err = rp.replay(res.Schedule); err != nil {
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
		us, cost, err := rp.replay(sch)
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
	if err := s.perKeyTTL(res, rp); err != nil {
		return nil, err
	}
	if err := s.perKeySearch(res, rp, g); err != nil {
		return nil, err
	}
	if s.opts.noBound {
		res.Exact = exact
		return res, nil
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
func mix(calls []Call, res *Result, group func(key string) string, rp *replayer) (bool, error) {
	split := func(cost []float64) map[string]float64 {
		m, _ := groupCosts(calls, cost, group)
		return m
	}
	cur := split(res.Cost)
	cands := make([]map[string]float64, len(res.cands)) // each split once, not once a group
	for k := range res.cands {
		cands[k] = split(res.cands[k].cost)
	}
	pick := map[string]int{} // group → candidate index, -1: the current schedule
	better := false
	for g := range cur {
		pick[g] = -1
		best := cur[g]
		for k := range res.cands {
			if v := cands[k][g]; v < best-1e-12*math.Max(1, best) {
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
	us, cost, err := rp.replay(sch)
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
	rp := newReplayer(calls, opts)
	changed, err := mix(calls, res, group, rp)
	if err != nil {
		return changed, err
	}
	policy := map[string]bool{}
	for {
		over := ""
		got, names := groupCosts(calls, res.Cost, group)
		want, _ := groupCosts(calls, res.PolicyCost, group)
		for _, g := range names {
			if !policy[g] && got[g] > want[g]+1e-12*math.Max(1, want[g]) {
				over = g
				break
			}
		}
		if over == "" {
			better, err := improve(calls, res, group, rp)
			return changed || better, err
		}
		policy[over], changed = true, true
		sch := make([][]prompt.Breakpoint, len(calls))
		for i := range calls {
			sch[i] = res.Schedule[i]
			if !calls[i].Fixed && policy[group(calls[i].Key)] {
				sch[i] = calls[i].Policy
			}
		}
		us, cost, err := rp.replay(sch)
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
func (s *solver) perKeyTTL(res *Result, rp *replayer) error {
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
	bestUs, bestCost, err := rp.replay(bestSch)
	if err != nil {
		return err
	}
	best := sum(bestCost)
	for _, k := range keys {
		long[k] = true
		sch := build()
		us, cost, err := rp.replay(sch)
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

// improve moves groups, one at a time, to the schedule tried (res.cands)
// that billed their calls least, when the joint replay says the move
// bills that group less and no other group more: a joint optimum split by
// its calls' bills may leave a session above what a plain schedule of the
// same requests (all 5m, say) billed it. Each move only lowers bills, so
// the loop ends; it stops after a pass with no move.
func improve(calls []Call, res *Result, group func(key string) string, rp *replayer) (bool, error) {
	split := func(cost []float64) (map[string]float64, []string) { return groupCosts(calls, cost, group) }
	cands := make([]map[string]float64, len(res.cands))
	for k := range res.cands {
		cands[k], _ = split(res.cands[k].cost)
	}
	tol := func(v float64) float64 { return 1e-12 * math.Max(1, v) }
	changed := false
	tried := map[string]bool{} // group and candidate tried against the current schedule
	for pass := true; pass; {
		pass = false
		cur, names := split(res.Cost)
		for _, g := range names {
			best, pick := cur[g], -1
			for k := range cands {
				if v := cands[k][g]; v < best-tol(best) && !tried[fmt.Sprint(g, "\x00", k)] {
					best, pick = v, k
				}
			}
			if pick < 0 {
				continue
			}
			tried[fmt.Sprint(g, "\x00", pick)] = true
			sch := slices.Clone(res.Schedule)
			for i := range calls {
				if !calls[i].Fixed && group(calls[i].Key) == g {
					sch[i] = res.cands[pick].sch[i]
				}
			}
			us, cost, err := rp.replay(sch)
			if err != nil {
				return changed, err
			}
			got, _ := split(cost)
			ok := got[g] < cur[g]-tol(cur[g])
			for _, o := range names {
				ok = ok && (o == g || got[o] <= cur[o]+tol(cur[o]))
			}
			if !ok {
				continue
			}
			res.Schedule, res.Usage, res.Cost, res.CostUSD = sch, us, cost, sum(cost)
			res.Exact, changed, pass = false, true, true
			if !strings.HasSuffix(res.Source, "+improved") {
				res.Source += "+improved"
			}
			clear(tried)
			break
		}
	}
	return changed, nil
}

// perKeySearch replays, when the tape has several conversations, each
// one's schedule solved alone (Solve's jobs) together with the Fixed
// calls: the joint search's beam is shared by every conversation under
// way, and each conversation's own optimum is a schedule it may miss. The
// joint replay bills what the conversations share; it is kept if it
// beats res.
func (s *solver) perKeySearch(res *Result, rp *replayer, g *segment) error {
	if len(g.keys) < 2 {
		return nil
	}
	sch := variant(s.calls, 0, true)
	for i := range s.calls {
		if s.calls[i].Fixed {
			sch[i] = s.calls[i].fixedSchedule() // as every search sends it
		}
	}
	for n := range g.alone {
		a := &g.alone[n]
		if a.err != nil {
			return a.err
		}
		res.Capped += a.capped
		res.peak = max(res.peak, a.peak)
		res.skipped += a.skipped
		for j, i := range a.at {
			if !s.calls[i].Fixed {
				sch[i] = a.sch[j]
			}
		}
	}
	us, cost, err := rp.replay(sch)
	if err != nil {
		return err
	}
	c := sum(cost)
	res.cands = append(res.cands, cand{"per-conversation-search", sch, us, cost})
	if c < res.CostUSD {
		res.CostUSD, res.Schedule, res.Usage, res.Cost, res.Source = c, sch, us, cost, "per-conversation-search"
	}
	return nil
}

// groupCosts sums cost by group of the calls' keys, Fixed calls left out,
// and names the groups in the order their first calls come.
func groupCosts(calls []Call, cost []float64, group func(key string) string) (map[string]float64, []string) {
	m := map[string]float64{}
	var names []string
	for i := range calls {
		if calls[i].Fixed {
			continue
		}
		g := group(calls[i].Key)
		if _, ok := m[g]; !ok {
			names = append(names, g)
		}
		m[g] += cost[i]
	}
	return m, names
}

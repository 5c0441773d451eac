package hindsight

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Options are the provider's billing rules: the same rate card and latency
// the fake Anthropic provider was given.
type Options struct {
	// Prices gives each model's rates and minimum cacheable length; nil
	// means pricing.Default().
	Prices *pricing.Card
	// Latency overrides provider.DefaultLatency("anthropic", model), as
	// provider.Common.Latency does. TTFT decides when an entry becomes
	// readable and when it expires.
	Latency *provider.Latency
	// Beam caps the search states kept after a call (0: DefaultBeam). A
	// capped search is still a feasible schedule; only its optimality
	// is lost, and the bound says by how much at most.
	Beam int
	// FullChoices is the most candidate positions (live entries plus
	// future-shared boundaries) a call may have for the search to try
	// every subset of them (0: DefaultFullChoices). Past it, a call tries
	// the positions some later call shares up to (see Solve).
	FullChoices int
}

// Defaults of Options.
const (
	DefaultBeam        = 32
	DefaultFullChoices = 6
)

// A Result is the hindsight optimum of a tape: the cheapest schedule found,
// what it bills, and a proven lower bound on every schedule's bill.
type Result struct {
	// CostUSD is what Schedule bills, replayed through the fake provider,
	// over the calls that are not Fixed.
	CostUSD float64
	// BoundUSD is a lower bound on the bill of any schedule (Bound); when
	// it equals CostUSD, Schedule is optimal.
	BoundUSD float64
	// Exact reports that Schedule is proven optimal: the search tried
	// every relevant choice without capping, or the bound meets the cost.
	Exact bool
	// Schedule is the breakpoints of each call, sorted by block; Usage and
	// Cost what each call billed under it (0 for Fixed calls).
	Schedule [][]prompt.Breakpoint
	Usage    []traces.Usage
	Cost     []float64
	// PolicyUSD is what the policy's own schedule bills on the tape: the
	// run's bill for the same requests at the same times.
	PolicyUSD float64
	// PolicyUsage and PolicyCost are that bill per call.
	PolicyUsage []traces.Usage
	PolicyCost  []float64
	// Source says where Schedule came from: "search", or the policy
	// schedule variant that beat a capped search ("policy", "policy-5m",
	// "policy-1h", "none").
	Source string
	// SearchUSD is what the search's own schedule bills (CostUSD unless a
	// policy variant beat it).
	SearchUSD float64

	// cands are the schedules tried, each replayed (for Separate).
	cands []cand
}

// A cand is one schedule of the tape, replayed.
type cand struct {
	name  string
	sch   [][]prompt.Breakpoint
	usage []traces.Usage
	cost  []float64
}

// GapUSD is how far Schedule may be from the optimum at most.
func (r *Result) GapUSD() float64 { return max(0, r.CostUSD-r.BoundUSD) }

// KeyCost sums per-call costs by call key, for the calls whose key keep
// accepts.
func KeyCost(calls []Call, cost []float64, keep func(key string) bool) float64 {
	s := 0.0
	for i := range calls {
		if !calls[i].Fixed && keep(calls[i].Key) {
			s += cost[i]
		}
	}
	return s
}

// rules is one model's billing rules.
type rules struct {
	price pricing.Price
	lat   provider.Latency
}

func (o *Options) rules(model string) (rules, error) {
	if o.Prices == nil {
		o.Prices = pricing.Default()
	}
	p, err := o.Prices.Lookup(model)
	if err != nil {
		return rules{}, err
	}
	if p.CacheWrite5m < p.Input || p.CacheWrite1h < p.CacheWrite5m || p.CacheRead > p.Input {
		// The search drops writes nobody reads and the bound prices a
		// token at its cheapest class; both assume read ≤ input ≤ 5m write
		// ≤ 1h write, Anthropic's order (reference/providers.md §1.5).
		return rules{}, fmt.Errorf("hindsight: model %s: rates must order read ≤ input ≤ 5m write ≤ 1h write", model)
	}
	lat := provider.DefaultLatency("anthropic", model)
	if o.Latency != nil {
		lat = *o.Latency
	}
	return rules{price: p, lat: lat}, nil
}

// callPrefix is a call's blocks as a provider.Prefix.
type callPrefix []Block

func (p callPrefix) Chain(i int) uint64 { return p[i].Chain }
func (p callPrefix) End(i int) int      { return p[i].End }

// has reports whether c's prompt starts with the prefix whose last block
// is block, with hash chain chain. A chain covers its whole prefix, so the
// prefix is block+1 blocks long in every call that has it.
func (c *Call) has(block int32, chain uint64) bool {
	return int(block) < len(c.Blocks) && c.Blocks[block].Chain == chain
}

// lcp is the number of leading blocks a and b share.
func lcp(a, b *Call) int {
	return sort.Search(min(len(a.Blocks), len(b.Blocks)), func(i int) bool { return a.Blocks[i].Chain != b.Blocks[i].Chain })
}

// ent is one live cache entry of a search state.
type ent struct {
	model int32
	block int32 // its last block (the same index in every call that has it)
	chain uint64
	end   int
	e     provider.Entry
}

// A state is the cache after some calls, with the cheapest way found to
// reach it.
type state struct {
	ents   []ent // sorted by (model, chain)
	cost   float64
	rank   float64
	key    uint64
	parent *state
	bps    []prompt.Breakpoint
	usage  traces.Usage
	callC  float64
}

// store is a state's entries of one model, as provider.Entries.
type store struct {
	ents  *[]ent
	model int32
	p     callPrefix
	bps   []prompt.Breakpoint
}

func (s store) Entry(chain uint64) (provider.Entry, bool) {
	for i := range *s.ents {
		if x := &(*s.ents)[i]; x.model == s.model && x.chain == chain {
			return x.e, true
		}
	}
	return provider.Entry{}, false
}

func (s store) SetEntry(chain uint64, e provider.Entry) {
	for i := range *s.ents {
		if x := &(*s.ents)[i]; x.model == s.model && x.chain == chain {
			x.e = e
			return
		}
	}
	for _, bp := range s.bps {
		if s.p[bp.Block].Chain == chain {
			*s.ents = append(*s.ents, ent{model: s.model, block: int32(bp.Block), chain: chain, end: s.p[bp.Block].End, e: e})
			return
		}
	}
	panic("hindsight: an entry written off the breakpoints") // AnthropicStep writes only at breakpoints
}

// solver holds a tape's precomputed facts.
type solver struct {
	calls  []Call
	opts   Options
	models []string
	model  []int32 // model index of each call
	rules  []rules // by model index
	cov    []int   // last cacheable block with End ≥ the minimum, or -1
	// minAfter[i] is the earliest send time of calls i and later: calls
	// are in send order, but the engine sends a prewarm a little before
	// the session it warms, which may be before another session's call.
	minAfter []int64
	// nextOwn[i] is the next call of call i's conversation (key), or 0.
	nextOwn []int
}

func newSolver(calls []Call, opts Options) (*solver, error) {
	s := &solver{calls: calls, opts: opts, model: make([]int32, len(calls)), cov: make([]int, len(calls))}
	idx := map[string]int32{}
	for i := range calls {
		c := &calls[i]
		m, ok := idx[c.Model]
		if !ok {
			r, err := s.opts.rules(c.Model)
			if err != nil {
				return nil, err
			}
			m = int32(len(s.models))
			idx[c.Model] = m
			s.models = append(s.models, c.Model)
			s.rules = append(s.rules, r)
		}
		s.model[i] = m
		s.cov[i] = -1
		minLen := s.rules[m].price.MinCacheable
		for k := len(c.Blocks) - 1; k >= 0 && c.Blocks[k].End >= minLen; k-- {
			if c.Blocks[k].Cacheable {
				s.cov[i] = k
				break
			}
		}
	}
	s.nextOwn = make([]int, len(calls))
	seen := map[string]int{}
	for i := len(calls) - 1; i >= 0; i-- {
		s.nextOwn[i] = seen[calls[i].Key]
		seen[calls[i].Key] = i
	}
	s.minAfter = make([]int64, len(calls)+1)
	s.minAfter[len(calls)] = math.MaxInt64
	for i := len(calls) - 1; i >= 0; i-- {
		s.minAfter[i] = min(s.minAfter[i+1], calls[i].Time.UnixNano())
	}
	return s, nil
}

// step bills call i with bps (sorted, valid) against ents, updating them.
func (s *solver) step(i int, ents *[]ent, bps []prompt.Breakpoint) (traces.Usage, float64) {
	c := &s.calls[i]
	m := s.model[i]
	r := &s.rules[m]
	st := provider.AnthropicStep(c.Time, callPrefix(c.Blocks), c.Total, c.Output, bps, c.readLimit(), r.price.MinCacheable, r.lat,
		store{ents: ents, model: m, p: c.Blocks, bps: bps})
	if c.Fixed {
		return st.Usage, 0
	}
	return st.Usage, r.price.Cost(st.Usage)
}

// prune drops the entries no later call can touch: those no later call of
// their model contains, and those expired by the first that does (when no
// call after it is sent earlier). Dropping them changes nothing a later
// call sees, so the search stays exact.
func (s *solver) prune(i int, ents []ent) []ent {
	out := ents[:0]
	for _, x := range ents {
		for j := i + 1; j < len(s.calls); j++ {
			if s.model[j] != x.model || !s.calls[j].has(x.block, x.chain) {
				continue
			}
			if s.minAfter[j] < x.e.Expires.UnixNano() {
				out = append(out, x)
			}
			break
		}
	}
	return out
}

func (st *state) hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
		h ^= h >> 29
	}
	for _, x := range st.ents {
		mix(uint64(x.model)<<32 | uint64(uint32(x.block)))
		mix(x.chain)
		mix(uint64(x.e.Ready.UnixNano()))
		mix(uint64(x.e.Expires.UnixNano()))
		mix(uint64(x.e.TTL))
	}
	return h
}

func sameEnts(a, b []ent) bool {
	return slices.EqualFunc(a, b, func(x, y ent) bool {
		return x.model == y.model && x.chain == y.chain && x.e == y.e && x.block == y.block
	})
}

func cmpEnt(x, y ent) int {
	if c := cmp.Compare(x.model, y.model); c != 0 {
		return c
	}
	return cmp.Compare(x.chain, y.chain)
}

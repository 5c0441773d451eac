package provider

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
)

// Retention is OpenAI's prompt_cache_retention.
type Retention string

// Retentions.
const (
	InMemory Retention = "in_memory"
	Extended Retention = "24h"
)

// OpenAIOptions configures an OpenAI provider.
type OpenAIOptions struct {
	Common
	// Rand draws each prefix's idle lifetime; required for in-memory
	// retention (derive it from the run seed).
	Rand *rand.Rand
	// Retention is in_memory (the default) or 24h.
	Retention Retention
	// IdleMin and IdleMax bound the in-memory idle lifetime (default 5 and
	// 10 minutes); MaxIdle caps it (default 1h).
	IdleMin, IdleMax, MaxIdle time.Duration
}

// An OpenAI provider caches like OpenAI's automatic prompt caching
// (reference/providers.md §2 and the OpenAI checklist of §7):
//
//   - No markers (breakpoints are ignored); every prompt of at least the
//     model's MinCacheable (1024 when the card has none) is cached, free.
//   - A hit is the longest cached prefix, reported in 128-token steps from
//     1024: cached = 1024 + 128·⌊(hit−1024)/128⌋, 0 below 1024.
//   - In-memory prefixes are evicted after an idle lifetime drawn per use
//     from [IdleMin, IdleMax] with the seeded Rand (5–10 min), never over
//     MaxIdle (1 h); each hit starts a new idle period. Retention 24h keeps
//     idle prefixes 24 h.
//   - Cached tokens are a subset of prompt tokens on the wire (Wire); Usage
//     is additive (CacheRead = cached, Input = prompt − cached), and the
//     price card's CacheRead rate carries the family discount (50% gpt-4o,
//     75% gpt-4.1, 90% gpt-5).
//   - A prompt over the window is a 400 ErrContextOverflow; a model switch
//     starts cold.
//   - A request whose ReadLimit is set (an observed re-send) is served at
//     most that much of its cached prefix.
//
// Simplifications: matching is at block granularity (see prefixIndex);
// routing by prompt_cache_key and the ~15 RPM overflow to other machines
// are not modelled (a single machine per tenant: hit rates are an upper
// bound for bursty traffic); GPT-5.6 cache writes and explicit breakpoints
// are not modelled.
type OpenAI struct {
	opts   OpenAIOptions
	models map[string]*openaiCache
}

type openaiCache struct {
	price pricing.Price
	lat   Latency
	idx   *prefixIndex
}

// NewOpenAI returns an OpenAI provider with a cold cache.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.Retention == "" {
		o.Retention = InMemory
	}
	if o.Retention != InMemory && o.Retention != Extended {
		return nil, fmt.Errorf("provider: openai retention %q: want in_memory or 24h", o.Retention)
	}
	if o.IdleMin == 0 && o.IdleMax == 0 {
		o.IdleMin, o.IdleMax = 5*time.Minute, 10*time.Minute
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = time.Hour
	}
	if o.IdleMax < o.IdleMin {
		return nil, fmt.Errorf("provider: openai idle band [%v, %v] is empty", o.IdleMin, o.IdleMax)
	}
	if o.Retention == InMemory && o.Rand == nil && o.IdleMax > o.IdleMin {
		return nil, fmt.Errorf("provider: openai in-memory retention needs a seeded Rand")
	}
	return &OpenAI{opts: o, models: map[string]*openaiCache{}}, nil
}

// Name implements Provider.
func (o *OpenAI) Name() string { return "openai" }

func (o *OpenAI) idle() time.Duration {
	if o.opts.Retention == Extended {
		return 24 * time.Hour
	}
	d := o.opts.IdleMin
	if span := o.opts.IdleMax - o.opts.IdleMin; span > 0 {
		d += time.Duration(o.opts.Rand.Int64N(int64(span) + 1))
	}
	return min(d, o.opts.MaxIdle)
}

// Send implements Provider.
func (o *OpenAI) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, ok := o.models[req.Model]
	if !ok {
		p, err := o.opts.price(req.Model)
		if err != nil {
			return Response{}, err
		}
		c = &openaiCache{price: p, lat: o.opts.latency("openai", req.Model), idx: newPrefixIndex()}
		if c.price.MinCacheable == 0 {
			c.price.MinCacheable = 1024
		}
		o.models[req.Model] = c
	}
	if err := overflow(req.Total, c.price.Window); err != nil {
		return Response{}, err
	}
	hit, _ := c.idx.longest(now, req, false)
	if req.Limited && hit > req.ReadLimit {
		// An observed re-send (prompt.Request.ReadLimit): on OpenAI, a
		// request routed to a machine that does not hold the prefix.
		hit = req.ReadLimit
	}
	// Prefixes a concurrent request is still writing are not rewritten.
	pend, l := c.idx.longest(now, req, true)
	cached := 0
	if hit >= 0 {
		cached = steps(req.Blocks[hit].End, c.price.MinCacheable, 128)
	}
	ttft, decode := c.lat.Time(req.Total-cached, cached, req.Output)
	if req.Total >= c.price.MinCacheable {
		// The whole prompt is cached once the response starts; the run it
		// lands in, and every run it continues, starts a new idle period.
		r := c.idx.insert(req, pend, l, now.Add(ttft))
		exp := now.Add(ttft + o.idle())
		touch(r, func(r *run) { r.expires = later(r.expires, exp) })
	} else if pend >= 0 {
		exp := now.Add(o.idle())
		touch(l.r, func(r *run) { r.expires = later(r.expires, exp) })
	}
	c.idx.sweep(now)
	return implicitResponse(req, cached, ttft, decode), nil
}

// steps rounds a hit down to the reporting granularity: 0 below minimum,
// else minimum plus whole steps.
func steps(hit, minimum, step int) int {
	if hit < minimum {
		return 0
	}
	return minimum + (hit-minimum)/step*step
}

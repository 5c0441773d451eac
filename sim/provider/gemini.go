package provider

import (
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

// GeminiOptions configures a Gemini provider.
type GeminiOptions struct {
	Common
	// ImplicitIdle is how long an implicitly cached prefix survives unused
	// (default 5 minutes). Google documents no lifetime, only that hits are
	// not guaranteed and prefixes are evicted as capacity is reclaimed, so
	// this is an assumption; set it to bracket results.
	ImplicitIdle time.Duration
}

// A Gemini provider caches and bills like the Gemini API
// (ai.google.dev/gemini-api/docs/caching and the Vertex AI context-cache
// overview; reference/providers.md §3 and §8):
//
//   - Implicit caching, on by default for Gemini 2.5 and newer: a repeated
//     prefix of at least the model's MinCacheable (2.5 Flash and Pro 2048,
//     3.x 4096 in the 2026 snapshots) is read at the cached rate (90% off
//     on 2.5+); writing it is free and nothing is charged for storage. Hits
//     are not guaranteed: a prefix idle for ImplicitIdle is gone.
//   - Explicit context caching: the request's first breakpoint names the
//     prefix a harness put in a cachedContents resource, created with a
//     TTL (the breakpoint's tier, 5m or 1h; Gemini's default is 1h). Until
//     it expires every request sending that prefix reads it at the cached
//     rate, guaranteed. The request that creates it pays the creation call
//     (its tokens at the input rate), storage for the whole TTL (per
//     token-hour) and its own read at the cached rate; the rate card folds
//     the three into the 5m and 1h write rates (input + cached + storage ×
//     TTL, Price.StoragePerHour), so the usage class CacheWrite5m/1h
//     carries creation. A cache is not extended by use (its TTL is fixed at
//     creation, as the API's is unless updated).
//   - Usage reports cached tokens as a subset of the prompt
//     (usageMetadata.cachedContentTokenCount ⊂ promptTokenCount, in Wire);
//     traces.Usage is additive.
//   - A prompt over the window is a 400 ErrContextOverflow; caches are per
//     model.
//
// Simplifications: matching is at block granularity (prefixIndex); the
// implicit cache never evicts early under load; an explicit cache holds
// exactly the prefix through its breakpoint and only the first breakpoint
// counts (later ones are left to implicit caching); the long-context price
// tier above 200K prompt tokens (2.5 Pro) is not applied.
type Gemini struct {
	opts   GeminiOptions
	models map[string]*geminiCache
}

type geminiCache struct {
	price    pricing.Price
	lat      Latency
	implicit *prefixIndex
	explicit map[uint64]time.Time // prefix chain → expiry of its cachedContents
}

// NewGemini returns a Gemini provider with cold caches.
func NewGemini(o GeminiOptions) (*Gemini, error) {
	if o.ImplicitIdle < 0 {
		return nil, fmt.Errorf("provider: gemini implicit idle %v is negative", o.ImplicitIdle)
	}
	if o.ImplicitIdle == 0 {
		o.ImplicitIdle = 5 * time.Minute
	}
	return &Gemini{opts: o, models: map[string]*geminiCache{}}, nil
}

// Name implements Provider.
func (g *Gemini) Name() string { return "gemini" }

// Send implements Provider.
func (g *Gemini) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, ok := g.models[req.Model]
	if !ok {
		p, err := g.opts.price(req.Model)
		if err != nil {
			return Response{}, err
		}
		c = &geminiCache{price: p, lat: g.opts.latency("gemini", req.Model), implicit: newPrefixIndex(), explicit: map[uint64]time.Time{}}
		g.models[req.Model] = c
	}
	if err := overflow(req.Total, c.price.Window); err != nil {
		return Response{}, err
	}
	minLen := c.price.MinCacheable

	// Explicit: the prefix through the first breakpoint, when long enough.
	explicit, create := 0, prompt.NoCache
	if bp, ok := firstBreakpoint(req); ok && req.Blocks[bp.Block].End >= minLen {
		k := req.Blocks[bp.Block].Chain
		explicit = req.Blocks[bp.Block].End
		if exp, ok := c.explicit[k]; !ok || !now.Before(exp) {
			create = bp.TTL
			c.explicit[k] = now.Add(bp.TTL.Duration())
		}
	}

	// Implicit: the longest live prefix, whatever was marked.
	implicit := 0
	if hit, _ := c.implicit.longest(now, req, false); hit >= 0 && req.Blocks[hit].End >= minLen {
		implicit = req.Blocks[hit].End
	}
	pend, l := c.implicit.longest(now, req, true)

	u := traces.Usage{Output: int64(req.Output)}
	switch {
	case create != prompt.NoCache:
		// The cache is created from this request's prefix: billed as a
		// write of its tier, and this request reads what it just stored.
		if create == prompt.TTL1h {
			u.CacheWrite1h = int64(explicit)
		} else {
			u.CacheWrite5m = int64(explicit)
		}
		u.CacheRead = int64(max(implicit-explicit, 0))
	default:
		u.CacheRead = int64(max(explicit, implicit))
	}
	u.Input = int64(req.Total) - u.CacheRead - u.Writes()
	cached := int(u.CacheRead)
	if create == prompt.NoCache {
		cached = max(explicit, implicit)
	}
	ttft, decode := c.lat.Time(req.Total-cached, cached, req.Output)
	if req.Total >= minLen {
		r := c.implicit.insert(req, pend, l, now.Add(ttft))
		exp := now.Add(ttft + g.opts.ImplicitIdle)
		touch(r, func(r *run) { r.expires = later(r.expires, exp) })
	} else if pend >= 0 {
		exp := now.Add(g.opts.ImplicitIdle)
		touch(l.r, func(r *run) { r.expires = later(r.expires, exp) })
	}
	c.implicit.sweep(now)
	for k, exp := range c.explicit {
		if !now.Before(exp) {
			delete(c.explicit, k)
		}
	}
	return Response{
		Usage: u, TTFT: ttft, Decode: decode,
		Wire: WireUsage{PromptTokens: int64(req.Total), CachedTokens: u.CacheRead, CompletionTokens: int64(req.Output)},
	}, nil
}

// firstBreakpoint is the lowest breakpoint of req.
func firstBreakpoint(req *prompt.Request) (prompt.Breakpoint, bool) {
	if len(req.Breakpoints) == 0 {
		return prompt.Breakpoint{}, false
	}
	bp := req.Breakpoints[0]
	for _, b := range req.Breakpoints[1:] {
		if b.Block < bp.Block {
			bp = b
		}
	}
	return bp, bp.Block >= 0 && bp.Block < len(req.Blocks)
}

package provider

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
)

// DeepSeekOptions configures a DeepSeek provider.
type DeepSeekOptions struct {
	Common
	// Interval is the fixed token interval at which long inputs persist
	// units (default 4096; DeepSeek does not publish it).
	Interval int
	// MinUnit is the shortest unit cached (default 64, the old storage
	// unit).
	MinUnit int
	// Retention is how long an unused unit survives (default 24h; the docs
	// say hours to days).
	Retention time.Duration
	// BuildDelay is how long after the response starts a unit becomes
	// readable (default 0; the docs say building takes seconds).
	BuildDelay time.Duration
}

// A DeepSeek provider caches like DeepSeek's context caching on disk
// (reference/providers.md §4, current rules): always on, no markers. A hit
// is the longest persisted "cache prefix unit" the prompt starts with.
// Units are persisted at
//
//   - the end of each request's input, and the end of its output (found on
//     the next request that continues it: the end of the assistant message
//     that follows the previous prompt);
//   - a common prefix, once two requests share it and then diverge (A+B
//     then A+C misses, persists A, and A+D hits A);
//   - every Interval tokens inside long inputs (the unit ends at the exact
//     multiple of Interval, inside its block).
//
// Usage: hits are CacheRead, misses Input (Wire: prompt_cache_hit_tokens
// is CachedTokens, miss = PromptTokens − CachedTokens). A model switch
// starts cold; a prompt over the window is ErrContextOverflow.
//
// Simplifications: matching is at block granularity (see prefixIndex);
// "seen across several requests" is taken as two; peak/off-peak prices
// belong to the rate card, not here.
type DeepSeek struct {
	opts   DeepSeekOptions
	models map[string]*deepseekCache
}

type unit struct {
	tokens         int
	ready, expires time.Time
}

type deepseekCache struct {
	price pricing.Price
	lat   Latency
	seen  *prefixIndex
	units map[uint64]*unit
	// ends maps the chain of each request's last block to when its output
	// was complete.
	ends    map[uint64]time.Time
	sweepAt int
}

// NewDeepSeek returns a DeepSeek provider with a cold cache.
func NewDeepSeek(o DeepSeekOptions) *DeepSeek {
	if o.Interval <= 0 {
		o.Interval = 4096
	}
	if o.MinUnit <= 0 {
		o.MinUnit = 64
	}
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	return &DeepSeek{opts: o, models: map[string]*deepseekCache{}}
}

// Name implements Provider.
func (d *DeepSeek) Name() string { return "deepseek" }

func (c *deepseekCache) persist(chain uint64, tokens int, ready, expires time.Time, minUnit int) {
	if tokens < minUnit {
		return
	}
	if u := c.units[chain]; u != nil && !ready.Before(u.expires) {
		delete(c.units, chain) // expired: replace
	}
	if u := c.units[chain]; u != nil {
		if tokens > u.tokens {
			u.tokens = tokens
		}
		u.expires = later(u.expires, expires)
		if ready.Before(u.ready) {
			u.ready = ready
		}
		return
	}
	c.units[chain] = &unit{tokens: tokens, ready: ready, expires: expires}
}

// Send implements Provider.
func (d *DeepSeek) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, ok := d.models[req.Model]
	if !ok {
		p, err := d.opts.price(req.Model)
		if err != nil {
			return Response{}, err
		}
		c = &deepseekCache{price: p, lat: d.opts.latency("deepseek", req.Model), seen: newPrefixIndex(), units: map[uint64]*unit{}, ends: map[uint64]time.Time{}, sweepAt: 256}
		d.models[req.Model] = c
	}
	if err := overflow(req.Total, c.price.Window); err != nil {
		return Response{}, err
	}
	keep := now.Add(d.opts.Retention)
	seen, l := c.seen.longest(now, req, true)
	// The previous request's output unit: if the prompt continues a
	// request's input with the assistant message that answered it.
	top := seen
	if seen >= 0 {
		if done, ok := c.ends[req.Blocks[seen].Chain]; ok {
			if j := seen + 1; j < len(req.Blocks) && req.Blocks[j].Role == prompt.RoleAssistant {
				for j+1 < len(req.Blocks) && req.Blocks[j+1].Msg == req.Blocks[seen+1].Msg {
					j++
				}
				c.persist(req.Blocks[j].Chain, req.Blocks[j].End, done, done.Add(d.opts.Retention), d.opts.MinUnit)
				top = j
			}
		}
	}
	// The hit: the longest live unit at or before top. Units only sit on
	// seen prefixes (and the output unit), every Interval tokens along
	// them, so the walk back stops within one interval.
	hit := 0
	for i := top; i >= 0; i-- {
		if u := c.units[req.Blocks[i].Chain]; u != nil && !now.Before(u.ready) && now.Before(u.expires) {
			hit = u.tokens
			u.expires = later(u.expires, keep)
			break
		}
		if req.Blocks[i].End+d.opts.Interval < req.Blocks[top].End {
			break
		}
	}
	ttft, decode := c.lat.Time(req.Total-hit, hit, req.Output)
	ready := now.Add(ttft + d.opts.BuildDelay)
	exp := ready.Add(d.opts.Retention)
	n := len(req.Blocks)
	if n > 0 {
		// Common prefix with an earlier request that this one leaves.
		if seen >= 0 && seen < n-1 {
			c.persist(req.Blocks[seen].Chain, req.Blocks[seen].End, ready, exp, d.opts.MinUnit)
		}
		// Interval units on the new part, and the end of the input.
		prev := 0
		if seen >= 0 {
			prev = req.Blocks[seen].End
		}
		for i := seen + 1; i < n; i++ {
			b := &req.Blocks[i]
			if k := b.End / d.opts.Interval; k > prev/d.opts.Interval {
				c.persist(b.Chain, k*d.opts.Interval, ready, exp, d.opts.MinUnit)
			}
			prev = b.End
		}
		last := &req.Blocks[n-1]
		c.persist(last.Chain, last.End, ready, exp, d.opts.MinUnit)
		c.ends[last.Chain] = now.Add(ttft + decode + d.opts.BuildDelay)
	}
	r := c.seen.insert(req, seen, l, now)
	touch(r, func(r *run) { r.expires = later(r.expires, keep) })
	c.sweep(now)
	return implicitResponse(req, hit, ttft, decode), nil
}

func (c *deepseekCache) sweep(now time.Time) {
	c.seen.sweep(now)
	if len(c.units)+len(c.ends) < c.sweepAt {
		return
	}
	for k, u := range c.units {
		if !now.Before(u.expires) {
			delete(c.units, k)
		}
	}
	for k := range c.ends {
		if _, ok := c.units[k]; !ok {
			delete(c.ends, k)
		}
	}
	c.sweepAt = max(256, 2*(len(c.units)+len(c.ends)))
}

package provider

import (
	"container/list"
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// The default GPU profile of the vllm provider, the one VLLMLatency models:
// one 16 GB GPU serving a 3B model (Llama-3.2-3B, fp16) at vLLM's default
// gpu_memory_utilization of 0.9. Its KV cache is what is left of 14.4 GB
// after 6.4 GB of weights and ~1 GB of activations, ~7 GB, at 112 KiB per
// token (2 × 28 layers × 8 KV heads × 128 head dim × 2 bytes, from the
// model's config.json): about 61,000 tokens. vLLM's default block is 16
// tokens. Override both with the real numbers of a deployment (vLLM logs
// "# GPU blocks: N" at start: capacity = N × block size).
const (
	DefaultVLLMCapacity  = 61_000
	DefaultVLLMBlockSize = 16
)

// VLLMOptions configures a self-hosted vLLM-style provider.
type VLLMOptions struct {
	Common
	// BlockSize is the KV block size in tokens (default 16).
	BlockSize int
	// Capacity is the KV cache size in tokens (required).
	Capacity int
	// Window is the model's context length; 0 takes it from the price
	// card when the model is there, else no limit.
	Window int
}

// A VLLM provider caches like vLLM's automatic prefix caching
// (reference/providers.md §5): KV blocks of BlockSize tokens keyed by the
// hash of their prefix, only full blocks reused, freed blocks kept in an
// LRU queue and evicted when the cache holds more than Capacity tokens,
// the longest prefix of a request first (its tail). No markers, no TTL.
// Usage: hits are CacheRead, misses Input (a self-hosted model's rates,
// often 0, come from the rate card: --prices); Wire.CachedTokens is
// num_cached_tokens.
//
// Simplifications: matching is at block granularity (see prefixIndex); the
// KV of generated tokens is not kept, so the next call recomputes the
// previous reply (vLLM keeps it: this over-counts misses by one reply per
// call); eviction works on whole runs' tails, not single blocks of shared
// chains; there is no batching or queueing, one request at a time.
type VLLM struct {
	opts   VLLMOptions
	models map[string]*vllmCache
}

type vllmCache struct {
	lat    Latency
	window int
	idx    *prefixIndex
	lru    *list.List // of *run, most recent at the front
	used   int
}

// NewVLLM returns a vLLM provider with an empty KV cache.
func NewVLLM(o VLLMOptions) (*VLLM, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
	if o.Capacity <= 0 || o.BlockSize < 0 {
		return nil, fmt.Errorf("provider: vllm needs a KV capacity in tokens (got %d) and a positive block size", o.Capacity)
	}
	return &VLLM{opts: o, models: map[string]*vllmCache{}}, nil
}

// Name implements Provider.
func (v *VLLM) Name() string { return "vllm" }

// Send implements Provider.
func (v *VLLM) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, ok := v.models[req.Model]
	if !ok {
		c = &vllmCache{lat: v.opts.latency("vllm", req.Model), window: v.opts.Window, idx: newPrefixIndex(), lru: list.New()}
		if c.window == 0 && v.opts.Prices != nil {
			if p, err := v.opts.Prices.Lookup(req.Model); err == nil {
				c.window = p.Window
			}
		}
		v.models[req.Model] = c
	}
	if err := overflow(req.Total, c.window); err != nil {
		return Response{}, err
	}
	bs := v.opts.BlockSize
	hit, _ := c.idx.longest(now, req, false)
	// Prefixes a concurrent request is still writing are not rewritten.
	pend, l := c.idx.longest(now, req, true)
	cached := 0
	if hit >= 0 {
		// Full blocks only, and never the whole prompt: the last token is
		// always computed.
		cached = min(req.Blocks[hit].End, req.Total-1) / bs * bs
	}
	ttft, decode := c.lat.Time(req.Total-cached, cached, req.Output)
	r := c.idx.insert(req, pend, l, now)
	if r != nil {
		full := func(end int) int { return end / bs * bs }
		base := 0
		if r.parent != nil {
			base = full(r.parent.ends[r.fork-1])
		}
		if n := full(r.ends[r.kept-1]) - base; n != r.tokens {
			c.used += n - r.tokens
			r.tokens = n
		}
		touch(r, func(r *run) {
			if r.lru == nil {
				r.lru = c.lru.PushFront(r)
			} else {
				c.lru.MoveToFront(r.lru.(*list.Element))
			}
		})
		c.evict(bs, v.opts.Capacity)
	}
	c.idx.sweep(now)
	return implicitResponse(req, cached, ttft, decode), nil
}

// evict trims least recently used runs from their tails until the cache
// fits its capacity.
func (c *vllmCache) evict(bs, capacity int) {
	for c.used > capacity && c.lru.Len() > 0 {
		e := c.lru.Back()
		r := e.Value.(*run)
		base := 0
		if r.parent != nil {
			base = r.parent.ends[r.fork-1] / bs * bs
		}
		// Drop tail boundaries until the run's full blocks fit, or it is
		// empty.
		for r.kept > 0 && c.used > capacity {
			r.kept--
			keep := base
			if r.kept > 0 {
				keep = r.ends[r.kept-1] / bs * bs
			}
			c.used -= r.tokens - (keep - base)
			r.tokens = keep - base
		}
		if r.kept == 0 {
			r.dead = true
			c.lru.Remove(e)
			r.lru = nil
		}
	}
}

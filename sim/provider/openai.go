package provider

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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
	// Rand draws each prefix's idle lifetime; required (derive it from the
	// run seed) unless every band is a single value.
	Rand *rand.Rand
	// Retention is the prompt_cache_retention every request asks for: ""
	// (the default) is each model's default (RetentionOf), in_memory or
	// 24h. A model that supports only 24h (GPT-5.5 and later) uses it
	// whatever is asked, as the API does.
	Retention Retention
	// IdleMin and IdleMax bound the in-memory idle lifetime (default 5 and
	// 10 minutes); MaxIdle caps it (default 1h).
	IdleMin, IdleMax, MaxIdle time.Duration
	// ExtendedMin and ExtendedMax, when set, bound the extended (24h)
	// idle lifetime of every model, instead of its family's band
	// (ExtendedBand); it is always capped at 24 hours.
	ExtendedMin, ExtendedMax time.Duration
}

// RetentionOf is the retention a model caches with when a request does not
// ask (and the only one for models that support one). OpenAI's API
// reference (PromptCacheRetention, openai-java 4.39 and openai-ruby 0.65,
// reference/providers.md §2): "For gpt-5.5, gpt-5.5-pro, and future
// models, only 24h is supported"; older models default to 24h for
// organizations without zero data retention and to in_memory with it, and
// the guide's earlier default was in_memory. Codex sends no
// prompt_cache_retention (the ChatGPT backend refuses it), so for older
// models the default here is in_memory, the one every organization can
// have; set OpenAIOptions.Retention for the other.
func RetentionOf(model string) (r Retention, only bool) {
	if maj, min, ok := gptVersion(model); ok && (maj > 5 || maj == 5 && min >= 5) {
		return Extended, true
	}
	return InMemory, false
}

// ExtendedBand is how long a model's extended (24h) retention keeps an
// idle prefix, as Codex bills show it: OpenAI documents "up to a maximum
// of 24 hours" (KV tensors offloaded to GPU-local storage when memory is
// full), no lower bound. GPT-5.5 rollouts read a prefix after idle gaps
// of 11 minutes and miss it after 25; GPT-5.6 ones read after 14 to 72
// minutes (issue 23's 114 rollouts, CLI 0.120–0.144; a third party
// reports a 30-minute minimum life for GPT-5.6). The band draws the
// lifetime; reads past it that a log shows are observations (KeepAlive:
// one GPT-5.6 read of 88,832 tokens after 24.4 hours).
func ExtendedBand(model string) (lo, hi time.Duration) {
	if maj, min, ok := gptVersion(model); ok && (maj > 5 || maj == 5 && min >= 6) {
		return 14 * time.Minute, 72 * time.Minute
	}
	return 11 * time.Minute, 25 * time.Minute
}

// CacheGrid is where a model's cached-token counts fall: the largest
// count at or under the cached prefix that is a multiple of step less
// offset (and at least the model's minimum; 0 under it). The guide's rule
// is 1024 + 128·k (step 128, offset 0). GPT-5.5 reads on a coarser grid:
// every one of the 38 non-zero cached_tokens counts of its bills we hold
// (34 in the nine Codex captures of ../shared/traces/captures, CLI
// 0.142.3; 4 in the corpus rollout CryptoSodi/Battle-Cities, CLI 0.142.4)
// is 512·k − 128,
// where GPT-5.4's rollouts (anmol0b/Trezo-Ai, kunalcode12/Empire-of-bits-vorld)
// fall on every 128 step. So a GPT-5.5 request that sends the previous
// one's 17,952-token prompt back reads 17,792, not 17,920 (sim/assent's
// TestSharedCaptures names each such call). Other models keep the guide's
// grid until a bill shows otherwise.
func CacheGrid(model string) (step, offset int) {
	if maj, min, ok := gptVersion(model); ok && maj == 5 && min == 5 {
		return 512, 128
	}
	return 128, 0
}

// gptVersion parses "gpt-5.5-pro" as 5, 5 and "gpt-5-codex" as 5, 0.
func gptVersion(model string) (maj, min int, ok bool) {
	m := strings.TrimPrefix(strings.ToLower(model), "openai/")
	rest, found := strings.CutPrefix(m, "gpt-")
	if !found {
		return 0, 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end >= 0 {
		rest = rest[:end]
	}
	a, b, _ := strings.Cut(rest, ".")
	maj, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, false
	}
	if b != "" {
		if min, err = strconv.Atoi(b); err != nil {
			return 0, 0, false
		}
	}
	return maj, min, true
}

// An OpenAI provider caches like OpenAI's automatic prompt caching
// (reference/providers.md §2 and the OpenAI checklist of §7):
//
//   - No markers (breakpoints are ignored); every prompt of at least the
//     model's MinCacheable (1024 when the card has none) is cached, free.
//   - A hit is the longest cached prefix, reported in 128-token steps from
//     1024: cached = 1024 + 128·⌊(hit−1024)/128⌋, 0 below 1024; GPT-5.5
//     on a 512-token grid (CacheGrid).
//   - Retention per model (RetentionOf): in-memory prefixes are evicted
//     after an idle lifetime drawn per use from [IdleMin, IdleMax] with
//     the seeded Rand (5–10 min), never over MaxIdle (1 h); extended ones
//     after one drawn from the model family's band (ExtendedBand), never
//     over 24 h. Each hit starts a new idle period.
//   - In-memory retention caches what the model generated with the prompt
//     that produced it: the next request of the conversation, sending that
//     output back unchanged (prompt.Request.Generated), reads into it.
//     GPT-5.4 Codex rollouts read past the previous prompt by up to its
//     output (corpus anmol0b/Trezo-Ai ff1815ba: 18,128 + 712 → 18,688,
//     42,971 + 874 → 43,776); extended retention writes the prompt only
//     (no GPT-5.5 read in the API captures or the corpus passes the
//     previous prompt).
//   - Cached tokens are a subset of prompt tokens on the wire (Wire); Usage
//     is additive (CacheRead = cached, Input = prompt − cached), and the
//     price card's CacheRead rate carries the family discount (50% gpt-4o,
//     75% gpt-4.1, 90% gpt-5).
//   - A prompt over the window is a 400 ErrContextOverflow; a model switch
//     starts cold (what the bill reads after one is an observation).
//   - Routing by prompt_cache_key, where the request's key is known
//     (prompt.Request.RouteKey, set by the replay of captures): the guide
//     routes a request to a machine by a hash of its prefix combined with
//     the key, and a machine's cache is what it served, so a keyed request
//     reads only what requests with the same key wrote; each key has its
//     own prefix index. A Codex subagent's warm-up (its own key) reads
//     nothing of the 9,000 tokens of instructions and tools its parent
//     sent ten seconds before (trace_subagent_codex.json, packets 1 and
//     4; sim/assent's TestCodexCaptureRouteKey).
//   - Observations (see prompt.Request): a request whose ReadLimit is set
//     (a request routed to a machine without the prefix) is served at most
//     that much, a request whose KeepAlive is set that prefix as alive,
//     either no more than the ReadTokens the bill read (and that much when
//     a routing read ended inside the block after the limit).
//
// Simplifications: matching is at block granularity (see prefixIndex);
// without a RouteKey (every replay of logs) routing is not modelled, and
// the ~15 RPM overflow to other machines never is (one machine per tenant,
// or per key: hit rates are an upper bound for bursty traffic, and the
// routing misses a log shows are observations); GPT-5.6 cache writes and
// explicit breakpoints are not modelled.
type OpenAI struct {
	opts   OpenAIOptions
	models map[string]*openaiCache
	// last is each conversation's previous request: where its prompt
	// ended and how much it generated (in-memory output caching).
	last map[string]lastRequest
}

type lastRequest struct {
	chain  uint64
	output int
}

type openaiCache struct {
	price pricing.Price
	lat   Latency
	// idx holds what requests without a RouteKey wrote; keyed, each
	// prompt_cache_key's (routing).
	idx       *prefixIndex
	keyed     map[string]*prefixIndex
	retention Retention
	// step and offset are the model's CacheGrid.
	step, offset int
	// lo and hi bound the idle lifetime, max caps it.
	lo, hi, max time.Duration
}

// NewOpenAI returns an OpenAI provider with a cold cache.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.Retention != "" && o.Retention != InMemory && o.Retention != Extended {
		return nil, fmt.Errorf("provider: openai retention %q: want in_memory or 24h", o.Retention)
	}
	if o.IdleMin == 0 && o.IdleMax == 0 {
		o.IdleMin, o.IdleMax = 5*time.Minute, 10*time.Minute
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = time.Hour
	}
	if o.IdleMax < o.IdleMin || o.ExtendedMax < o.ExtendedMin {
		return nil, fmt.Errorf("provider: openai idle band [%v, %v] is empty", o.IdleMin, o.IdleMax)
	}
	if o.Rand == nil && (o.IdleMax > o.IdleMin || o.ExtendedMax > o.ExtendedMin || o.ExtendedMax == 0) {
		return nil, fmt.Errorf("provider: openai retention needs a seeded Rand")
	}
	return &OpenAI{opts: o, models: map[string]*openaiCache{}, last: map[string]lastRequest{}}, nil
}

// Name implements Provider.
func (o *OpenAI) Name() string { return "openai" }

// cacheOf is model's cache, made on first use with the model's rules.
func (o *OpenAI) cacheOf(model string) (*openaiCache, error) {
	if c, ok := o.models[model]; ok {
		return c, nil
	}
	p, err := o.opts.price(model)
	if err != nil {
		return nil, err
	}
	c := &openaiCache{price: p, lat: o.opts.latency("openai", model), idx: newPrefixIndex()}
	if c.price.MinCacheable == 0 {
		c.price.MinCacheable = 1024
	}
	r, only := RetentionOf(model)
	if o.opts.Retention != "" && !only {
		r = o.opts.Retention
	}
	c.retention = r
	c.step, c.offset = CacheGrid(model)
	switch {
	case r == InMemory:
		c.lo, c.hi, c.max = o.opts.IdleMin, o.opts.IdleMax, o.opts.MaxIdle
	case o.opts.ExtendedMax > 0:
		c.lo, c.hi, c.max = o.opts.ExtendedMin, o.opts.ExtendedMax, 24*time.Hour
	default:
		c.lo, c.hi = ExtendedBand(model)
		c.max = 24 * time.Hour
	}
	o.models[model] = c
	return c, nil
}

func (o *OpenAI) idle(c *openaiCache) time.Duration {
	d := c.lo
	if span := c.hi - c.lo; span > 0 {
		d += time.Duration(o.opts.Rand.Int64N(int64(span) + 1))
	}
	return min(d, c.max)
}

// Send implements Provider.
func (o *OpenAI) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, err := o.cacheOf(req.Model)
	if err != nil {
		return Response{}, err
	}
	if err := overflow(req.Total, c.price.Window); err != nil {
		return Response{}, err
	}
	idx := c.idx
	if req.RouteKey != "" {
		if idx = c.keyed[req.RouteKey]; idx == nil {
			if c.keyed == nil {
				c.keyed = map[string]*prefixIndex{}
			}
			idx = newPrefixIndex()
			c.keyed[req.RouteKey] = idx
		}
	}
	hit, _ := idx.longest(now, req, false)
	revived := false
	if req.KeptAlive && req.KeepAlive > hit && req.KeepAlive < len(req.Blocks) {
		// An observed read past the idle lifetime: the prefix was alive.
		hit, revived = req.KeepAlive, true
	}
	tokens := 0 // the cached prefix, in tokens
	if hit >= 0 {
		tokens = req.Blocks[hit].End
	}
	switch {
	case req.Limited && hit > req.ReadLimit && req.ReadLimit+1 < len(req.Blocks) && req.ReadTokens > endOf(req, req.ReadLimit):
		// An observed re-send that ended inside the block after the
		// limit: on OpenAI, a request routed to a machine holding part of
		// the prefix (the floor). It serves the observed read.
		tokens = min(tokens, req.ReadTokens)
	case req.Limited && hit > req.ReadLimit:
		hit = req.ReadLimit
		tokens = endOf(req, hit)
	case !req.Limited && !req.KeptAlive && c.retention == InMemory && hit >= 0:
		tokens += o.generated(req, hit)
	}
	if (req.Limited || req.KeptAlive) && req.ReadTokens > 0 {
		tokens = min(tokens, req.ReadTokens) // an observation serves what the bill read
	}
	// Prefixes a concurrent request is still writing are not rewritten.
	pend, l := idx.longest(now, req, true)
	cached := steps(tokens, c.price.MinCacheable, 128)
	if c.offset != 0 || c.step != 128 {
		cached = onGrid(tokens, c.price.MinCacheable, c.step, c.offset)
	}
	ttft, decode := c.lat.Time(req.Total-cached, cached, req.Output)
	if req.Total >= c.price.MinCacheable {
		// The whole prompt is cached once the response starts; the run it
		// lands in, and every run it continues, starts a new idle period.
		r := idx.insert(req, pend, l, now.Add(ttft))
		exp := now.Add(ttft + o.idle(c))
		touch(r, func(r *run) { r.expires = later(r.expires, exp) })
	} else if pend >= 0 {
		exp := now.Add(o.idle(c))
		touch(l.r, func(r *run) { r.expires = later(r.expires, exp) })
	}
	idx.sweep(now)
	if req.Key != "" && len(req.Blocks) > 0 {
		o.last[req.Key] = lastRequest{chain: req.Blocks[len(req.Blocks)-1].Chain, output: req.Output}
	}
	resp := implicitResponse(req, cached, ttft, decode)
	resp.KeptAlive = revived
	return resp, nil
}

// generated is how many tokens past block hit req reads of what the
// conversation's previous call generated: when its prompt is cached to
// its end (block hit) and req sends that call's output back from the next
// block, up to the output's size.
func (o *OpenAI) generated(req *prompt.Request, hit int) int {
	g := req.Generated
	prev, ok := o.last[req.Key]
	if g <= 0 || g != hit+1 || g >= len(req.Blocks) || !ok || req.Blocks[hit].Chain != prev.chain {
		return 0
	}
	end := g
	for end+1 < len(req.Blocks) && req.Blocks[end+1].Msg == req.Blocks[g].Msg {
		end++
	}
	return min(prev.output, req.Blocks[end].End-req.Blocks[hit].End)
}

// endOf is where block i of req ends, 0 before the first.
func endOf(req *prompt.Request, i int) int {
	if i < 0 {
		return 0
	}
	return req.Blocks[i].End
}

// steps rounds a hit down to the reporting granularity: 0 below minimum,
// else minimum plus whole steps.
// onGrid is the largest multiple of step less offset at or under hit, 0
// under minimum (CacheGrid).
func onGrid(hit, minimum, step, offset int) int {
	c := (hit+offset)/step*step - offset
	if hit < minimum || c < minimum {
		return 0
	}
	return c
}

func steps(hit, minimum, step int) int {
	if hit < minimum {
		return 0
	}
	return minimum + (hit-minimum)/step*step
}

package provider

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

// Lookback is how many block boundaries before a breakpoint Anthropic checks
// for a cached prefix, besides the breakpoint's own.
const Lookback = 20

// AnthropicOptions configures an Anthropic provider.
type AnthropicOptions struct {
	Common
	// ClearToolUses turns on server-side context editing
	// (clear_tool_uses_20250919); nil leaves the prompt as sent.
	ClearToolUses *ClearToolUses
	// BreakpointsOnly keeps entries at breakpoints only, not the prefixes
	// inside a written entry (see AnthropicStep). The captures of exact
	// requests contradict those: trace_compact_claude.json packet 8 marks
	// the end of a message that packet 6's entry (written 3 s before,
	// through the next message) holds, inside its lookback, yet reads
	// only 41,753 (packet 4's breakpoint) and writes the 359 tokens to
	// the marker again. The replay of captures (package sim/assent) uses
	// it; the replays of logs keep sub-prefixes, which explain corpus
	// llm-guard aa57d486's read after a rewind, until the two are
	// reconciled.
	BreakpointsOnly bool
}

// An Anthropic provider caches and bills like the Anthropic Messages API
// (reference/providers.md §1 and the Anthropic checklist of §7):
//
//   - A request is rendered tools → system → messages (the Builder's order)
//     and cache entries are keyed by the hash chain of the prefix through a
//     block, so any change invalidates everything after it.
//   - At most 4 breakpoints (more: 400 ErrTooManyBreakpoints), each on a
//     block that can carry cache_control (ErrNotCacheable), with ttl 5m or
//     1h (ErrInvalidTTL), every 1h one before every 5m one (ErrTTLOrder).
//   - For each breakpoint, the breakpoint's boundary and up to Lookback
//     earlier boundaries are checked for a live entry; the longest wins. A
//     turn that adds more than 20 blocks after the previous breakpoint
//     misses it.
//   - A breakpoint whose prefix is shorter than the model's MinCacheable is
//     ignored: no write, no read, no error.
//   - A hit refreshes its entry's TTL at no charge (every breakpoint's hit
//     does, not only the highest: that keeps a system-prompt entry alive
//     while a longer one serves the reads). An entry written by a request
//     is readable from now+TTFT, when the response starts, and lives TTL
//     from then. The docs, as quoted (context-guru PR #86), start the
//     clock at the request's start; replaying the recorded session
//     4d5611e5 that way moves the observed replay error from −0.5% to
//     +9.3% (ctxsim fidelity testdata/claude-code), so the write keeps
//     the response-start clock the logs agree with (DESIGN.md).
//   - Billing follows the three positions of mixed TTLs: A the highest
//     hit, B the highest 1h breakpoint after A (A if none), C the last
//     breakpoint (A if none after it): read A, 1h write B−A, 5m write C−B,
//     input Total−C; output is req.Output. Usage is additive.
//   - A prompt over the model's Window is a 400 ErrContextOverflow, unless
//     the request asked for a larger window (the 1M-context option) the
//     model offers (pricing.Price.WindowFor).
//   - Cache state is per model: a model switch starts cold. One provider
//     instance is one organization (tenant).
//   - A written entry also caches the prefixes at the block boundaries
//     inside it (from the hit on): a later request that diverges inside it
//     (a rewind, an edited last message) reads up to the last common
//     boundary its lookback reaches, though no request marked it. A
//     re-send's ReadLimit and a kept-alive read (prompt.Request) are
//     observations the provider follows.
//
// Simplifications: breakpoint entries are written only at breakpoints
// past the hit, so a lower breakpoint whose entry expired while a longer
// one survived is not rewritten (the API bills nothing below A either; whether it recreates
// the entry is not documented). A refresh keeps the entry's own tier.
// Thinking-block stripping lives in the Builder (a stripped block changes
// the hash chain there, incrementally). The invalidation matrix for
// request settings (prompt.Params) is applied here: each entry's key is its
// prefix chain salted with the settings its section depends on (see
// view.Chain). Rate limits are not modelled.
type Anthropic struct {
	opts   AnthropicOptions
	models map[string]*anthropicCache
	// convs is each conversation's last call, for miss attribution.
	convs map[string]*lastCall
	// bps and v are Send's scratch (a provider is one tenant's, called
	// in turn), kept so that a call allocates neither.
	bps [prompt.MaxBreakpoints]prompt.Breakpoint
	v   view
}

// lastCall is what a conversation's previous call cached: its last
// breakpoint past the minimum length and the prefix it covers (end 0:
// nothing cached, nothing the next call could miss).
type lastCall struct {
	model string
	bp    cachedBP
	end   int
}

type cachedBP struct {
	block int
	chain uint64
}

type anthropicCache struct {
	price   pricing.Price
	lat     Latency
	entries entryMap
	sweepAt int
}

// entryMap is the provider's Entries: a map, and a bit per slot of a
// chain's low bits set when an entry with such a chain is written. A
// breakpoint's lookback asks for up to 20 chains, most of them never
// cached: a clear bit answers those without a map probe. Bits are never
// cleared (a swept entry's bit only costs a probe), so the answer is the
// map's.
type entryMap struct {
	m    map[uint64]Entry
	bits *[entryBits / 64]uint64
	// subs is SubPrefixes' answer (AnthropicOptions.BreakpointsOnly).
	subs bool
}

const entryBits = 1 << 14

// entryMaps are the maps of released providers (Release), cleared: a
// replay after the first reuses one's memory instead of faulting in a
// fresh map of the same size.
var entryMaps sync.Pool

func newEntryMap(hint int) entryMap {
	if v := entryMaps.Get(); v != nil {
		return *v.(*entryMap)
	}
	return entryMap{m: make(map[uint64]Entry, hint), bits: new([entryBits / 64]uint64)}
}

// Release implements Releaser: a's cache maps, cleared, go to the next
// provider made.
func (a *Anthropic) Release() {
	for _, c := range a.models {
		clear(c.entries.m)
		clear(c.entries.bits[:])
		em := c.entries
		entryMaps.Put(&em)
	}
	a.models = nil
}

func (m entryMap) Entry(k uint64) (Entry, bool) {
	if b := k % entryBits; m.bits[b/64]&(1<<(b%64)) == 0 {
		return Entry{}, false
	}
	e, ok := m.m[k]
	return e, ok
}

func (m entryMap) SetEntry(k uint64, e Entry) {
	b := k % entryBits
	m.bits[b/64] |= 1 << (b % 64)
	m.m[k] = e
}

func (m entryMap) SubPrefixes() bool { return m.subs }

// SubPrefixes is implemented by an entry store that keeps the prefixes
// inside a written entry, at every block boundary (see AnthropicStep).
// package hindsight's store does not: its search knows entries at
// breakpoints only, so its optimum is of a cache without them.
type SubPrefixes interface{ SubPrefixes() bool }

// NewAnthropic returns an Anthropic provider with a cold cache.
func NewAnthropic(o AnthropicOptions) *Anthropic {
	return &Anthropic{opts: o, models: map[string]*anthropicCache{}, convs: map[string]*lastCall{}}
}

// Name implements Provider.
func (a *Anthropic) Name() string { return "anthropic" }

func (a *Anthropic) cache(model string) (*anthropicCache, error) {
	if c, ok := a.models[model]; ok {
		return c, nil
	}
	p, err := a.opts.price(model)
	if err != nil {
		return nil, err
	}
	c := &anthropicCache{price: p, lat: a.opts.latency("anthropic", model), entries: newEntryMap(a.opts.Blocks), sweepAt: 64}
	c.entries.subs = !a.opts.BreakpointsOnly
	a.models[model] = c
	return c, nil
}

// Send implements Provider.
func (a *Anthropic) Send(now time.Time, req *prompt.Request) (Response, error) {
	c, err := a.cache(req.Model)
	if err != nil {
		return Response{}, err
	}
	bps, err := checkBreakpoints(req, &a.bps)
	if err != nil {
		return Response{}, err
	}
	a.v = a.opts.ClearToolUses.apply(req)
	v := &a.v
	v.salts(req.Params)
	if err := overflow(v.total, c.price.WindowFor(req.Window)); err != nil {
		return Response{}, err
	}
	// Whether the previous call's entry is live is judged before this call
	// writes.
	prevLive := false
	if prev := a.convs[req.Key]; prev != nil {
		e, ok := c.entries.Entry(prev.bp.chain)
		prevLive = ok && e.live(now)
	}
	ob := ObservationOf(len(req.Blocks), req.Limited, req.ReadLimit, req.KeptAlive, req.KeepAlive, req.ReadTokens, req.ReadInside)
	o, revived := ObservedStep(now, v, v.total, req.Output, bps, ob, c.price.MinCacheable, c.lat.Started(req.Started), c.entries)
	miss := a.attribute(v, req, prevLive, o.Hit, o.Last, bps, c.price.MinCacheable)
	c.sweep(now)
	return Response{Usage: o.Usage, TTFT: o.TTFT, Decode: o.Decode, Wire: WireUsage{ClearedInputTokens: int64(req.Total - v.total)}, Miss: miss, KeptAlive: revived}, nil
}

// An Observation is what the log showed a call's cache did that no rule
// explains, as the provider applies it (prompt.Request's ReadLimit,
// KeepAlive, ReadTokens and ReadInside).
type Observation struct {
	// Limit is the last block whose entry may be served (a re-send);
	// len(blocks) or more: any.
	Limit int
	// Keep is the block a read past the TTL revives (Revive), -1 none.
	Keep int
	// Tokens is the bill's read when it ended inside the floor block
	// Inside, which the replay holds whole (-1: none); OnRevive says it
	// is Keep's, served so only when revived.
	Tokens, Inside int
	OnRevive       bool
}

// ObservationOf is the observation of a request of n blocks with
// prompt.Request's fields: a re-send's limit (limited, readLimit), a read
// past the TTL (kept, keepAlive), the bill's read and whether it ended
// inside a floor block (tokens, inside: prompt.Request.ReadInside).
func ObservationOf(n int, limited bool, readLimit int, kept bool, keepAlive, tokens int, inside bool) Observation {
	ob := Observation{Limit: n, Keep: -1, Tokens: tokens, Inside: -1}
	if limited {
		ob.Limit = readLimit
	}
	if kept && keepAlive < n {
		ob.Keep = keepAlive
	}
	switch {
	case inside && limited:
		ob.Inside = readLimit + 1
	case inside && ob.Keep >= 0:
		ob.Inside, ob.OnRevive = ob.Keep, true
	}
	return ob
}

// ObservedStep is AnthropicStep with a call's observations applied, as
// Send bills them; package hindsight's search and replay bill with it
// too, so a schedule is priced against the same facts. A read past the
// TTL revives its entries (Revive; it reports whether any was). A read
// that ended inside a floor block (an inferred floor: the request had
// boundaries the replay's opaque block lacks) serves what the bill read
// and writes the rest of the block again: a re-send's (corpus 2.0.57
// 703e4528 line 106: 27,049 of a 30,091-token floor), and a read past the
// TTL's when the block was revived (Smartagent-so eca51c57: 12,598 of a
// 98,780-token first prompt after each idle gap; a schedule that kept
// the block alive reads it all). The OpenAI provider serves the observed
// read likewise.
func ObservedStep[P Prefix, S Entries](now time.Time, p P, total, out int, bps []prompt.Breakpoint, ob Observation, minLen int, lat Latency, s S) (Step, bool) {
	revived := ob.Keep >= 0 && Revive(now, p, ob.Keep, bps, s)
	limit, cut := ob.Limit, false
	if ob.Inside >= 0 && (revived || !ob.OnRevive) {
		limit, cut = ob.Inside, true
	}
	st := AnthropicStep(now, p, total, out, bps, limit, minLen, lat, s)
	if d := int64(st.Hit - ob.Tokens); cut && d > 0 {
		st.Usage.CacheRead -= d
		switch {
		case st.Usage.CacheWrite1h > 0:
			st.Usage.CacheWrite1h += d
		case st.Usage.CacheWrite5m > 0:
			st.Usage.CacheWrite5m += d
		default:
			st.Usage.Input += d
		}
		st.Hit = ob.Tokens
	}
	return st, revived
}

// Revive makes the entry at block keep of p, and the entries of the
// breakpoints bps inside it, alive at now, as an observed read past the
// TTL says they were (prompt.Request.KeepAlive): the entry was alive,
// whatever a replay sent, and so were the entries of the request's
// breakpoints inside it (the unseen request that kept it alive marked them
// too). A revived entry lives only as long as a hit now refreshes it. It
// reports whether any entry was revived. Send and package hindsight's
// search and replay both call it, so the optimum takes the observed read
// as a fact of the timeline, as the replay did.
func Revive[P Prefix, S Entries](now time.Time, p P, keep int, bps []prompt.Breakpoint, s S) bool {
	revived := false
	revive := func(b int) {
		k := p.Chain(b)
		if e, ok := s.Entry(k); !ok || !e.live(now) {
			s.SetEntry(k, Entry{Ready: now, Expires: now.Add(time.Nanosecond), TTL: prompt.TTL5m})
			revived = true
		}
	}
	if keep < 0 {
		return false
	}
	for _, bp := range bps {
		if bp.Block < keep {
			revive(bp.Block)
		}
	}
	revive(keep)
	return revived
}

// A Prefix is a prompt as the cache sees it: the hash chain and the
// cumulative token end of each block.
type Prefix interface {
	Chain(i int) uint64
	End(i int) int
}

// An Entry is one cached prefix: readable from Ready, alive until Expires,
// refreshed with its own TTL tier.
type Entry struct {
	Ready, Expires time.Time
	TTL            prompt.TTL
	// sub marks the entry of a prefix inside a written one, at a boundary
	// no breakpoint marked.
	sub bool
}

func (e *Entry) live(now time.Time) bool { return !now.Before(e.Ready) && now.Before(e.Expires) }

// Entries is a cache's entries by prefix chain. The provider keeps a map;
// package hindsight keeps the few entries a schedule can still use.
type Entries interface {
	Entry(chain uint64) (Entry, bool)
	SetEntry(chain uint64, e Entry)
}

// A Step is what one request did to an Anthropic cache: its usage, the
// highest hit (A) and last written position (C), and its timing.
type Step struct {
	Usage        traces.Usage
	Hit, Last    int
	TTFT, Decode time.Duration
}

// AnthropicStep bills one request of total tokens (output out) whose
// validated breakpoints, sorted by block, are bps, against the entries in
// s, and updates them; no entry past block readLimit is served
// (prompt.Request.ReadLimit): the rules of the Anthropic type's comment, in one
// place, shared by Send and by package hindsight's search and replay.
func AnthropicStep[P Prefix, S Entries](now time.Time, p P, total, out int, bps []prompt.Breakpoint, readLimit, minLen int, lat Latency, s S) Step {
	// A: the longest live prefix any breakpoint's lookback reaches. look
	// checks from's boundary and up to Lookback before it, none past
	// readLimit, and refreshes the first live entry it finds.
	hit, hitBlock := 0, -1
	look := func(from int) {
		for j := min(from, readLimit); j >= 0 && j >= from-Lookback; j-- {
			k := p.Chain(j)
			e, ok := s.Entry(k)
			if !ok || !e.live(now) {
				continue
			}
			if x := now.Add(e.TTL.Duration()); x.After(e.Expires) {
				e.Expires = x
				s.SetEntry(k, e)
			}
			if p.End(j) > hit {
				hit, hitBlock = p.End(j), j
			}
			return
		}
	}
	for _, bp := range bps {
		if p.End(bp.Block) >= minLen {
			look(bp.Block)
		}
	}
	if n := len(bps); n > 0 && readLimit >= 0 && readLimit < bps[n-1].Block {
		// An observed re-send cut the served prefix at readLimit: the log
		// shows the read landing on a boundary there, so the entry at or
		// just before it is served as a breakpoint's would be, even when no
		// breakpoint of this request looks back that far (corpus
		// attio-mcp-server c7428042: a re-send reads exactly the first
		// call's 58,384-token entry, 40 blocks before the tail).
		look(readLimit)
	}
	b, last := hit, hit
	for _, bp := range bps {
		end := p.End(bp.Block)
		if end < minLen || end <= hit {
			continue
		}
		if bp.TTL == prompt.TTL1h {
			b = max(b, end)
		}
		last = max(last, end)
	}
	st := Step{
		Usage: traces.Usage{
			Input:        int64(total - last),
			CacheWrite5m: int64(last - b),
			CacheWrite1h: int64(b - hit),
			CacheRead:    int64(hit),
			Output:       int64(out),
		},
		Hit: hit, Last: last,
	}
	st.TTFT, st.Decode = lat.Time(total-hit, hit, out)
	ready := now.Add(st.TTFT)
	from := hitBlock + 1 // the first block this request writes
	sp, subs := any(s).(SubPrefixes)
	subs = subs && sp.SubPrefixes()
	for _, bp := range bps {
		end := p.End(bp.Block)
		if end < minLen || end <= hit {
			continue
		}
		k := p.Chain(bp.Block)
		exp := ready.Add(bp.TTL.Duration())
		// The prefixes ending at the written blocks' boundaries are
		// cached with it: a later request that diverges inside this
		// entry reads up to the last common boundary, when its lookback
		// reaches it (corpus llm-guard aa57d486: after a rewind that
		// drops a 376-token message, the read is the 84,820 tokens before
		// it, a boundary no request had marked).
		for j := from; subs && j < bp.Block; j++ {
			if p.End(j) < minLen {
				continue
			}
			sk := p.Chain(j)
			if e, ok := s.Entry(sk); !ok || e.Expires.Before(exp) {
				s.SetEntry(sk, Entry{Ready: ready, Expires: exp, TTL: bp.TTL, sub: true})
			}
		}
		from = max(from, bp.Block+1)
		if e, ok := s.Entry(k); ok && now.Before(e.Ready) {
			// A concurrent request is writing the same prefix: its entry
			// appears first; this one only extends its life.
			e.Expires = later(e.Expires, exp)
			s.SetEntry(k, e)
			continue
		}
		s.SetEntry(k, Entry{Ready: ready, Expires: exp, TTL: bp.TTL})
	}
	return st
}

// attribute says why this call read less than its conversation's previous
// call cached, and remembers what this call caches for the next one. It
// looks at the previous call's last breakpoint only: O(1) per call.
func (a *Anthropic) attribute(v *view, req *prompt.Request, prevLive bool, hit, last int, bps []prompt.Breakpoint, minLen int) Miss {
	var m Miss
	prev := a.convs[req.Key]
	switch {
	case prev == nil || prev.end <= hit:
	case req.Limited && prev.model == req.Model:
		m = Miss{Reason: MissObserved, Tokens: prev.end - hit}
	case prev.model != req.Model:
		m = Miss{Reason: MissModel, Tokens: prev.end}
	default:
		pb := prev.bp
		m.Tokens = prev.end - hit
		if pb.block >= len(req.Blocks) || v.Chain(pb.block) != pb.chain {
			m.Reason = MissRewrite
		} else if !prevLive {
			m.Reason = MissExpired
		} else {
			m.Reason = MissLookback
		}
	}
	if req.Key == "" {
		return m
	}
	lc := prev
	if lc == nil {
		lc = &lastCall{}
		a.convs[req.Key] = lc
	}
	lc.model, lc.end = req.Model, 0
	for i := len(bps) - 1; i >= 0; i-- {
		if b := bps[i].Block; v.End(b) >= minLen {
			lc.bp, lc.end = cachedBP{block: b, chain: v.Chain(b)}, last
			break
		}
	}
	return m
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sweep drops expired entries once the map has doubled since the last
// sweep, so the cost is amortized O(1) per write.
func (c *anthropicCache) sweep(now time.Time) {
	if len(c.entries.m) < c.sweepAt {
		return
	}
	for k, e := range c.entries.m {
		if !now.Before(e.Expires) {
			delete(c.entries.m, k)
		}
	}
	c.sweepAt = max(64, 2*len(c.entries.m))
}

// checkBreakpoints validates req's breakpoints as the API would and returns
// them sorted by block, in buf.
//
// A top-level cache_control (req.Automatic) becomes a breakpoint on the
// last cacheable block and counts against the limit, as the automatic
// mode takes one of the four slots (reference/providers.md §8). When an
// explicit mark is already there, the two are one breakpoint.
func checkBreakpoints(req *prompt.Request, buf *[prompt.MaxBreakpoints]prompt.Breakpoint) ([]prompt.Breakpoint, error) {
	n := len(req.Breakpoints)
	auto := -1
	if req.Automatic != prompt.NoCache {
		for i := len(req.Blocks) - 1; i >= 0; i-- {
			if req.Blocks[i].Cacheable {
				auto = i
				break
			}
		}
		if auto >= 0 && !slices.ContainsFunc(req.Breakpoints, func(bp prompt.Breakpoint) bool { return bp.Block == auto }) {
			n++
		} else {
			auto = -1
		}
	}
	if n > prompt.MaxBreakpoints {
		what := ""
		if auto >= 0 {
			what = " (the automatic cache_control takes one)"
		}
		return nil, &APIError{Status: 400, Kind: ErrTooManyBreakpoints, Msg: fmt.Sprintf("a maximum of %d blocks with cache_control may be provided; found %d%s", prompt.MaxBreakpoints, n, what)}
	}
	bps := append(buf[:0], req.Breakpoints...)
	if auto >= 0 {
		bps = append(bps, prompt.Breakpoint{Block: auto, TTL: req.Automatic})
	}
	slices.SortStableFunc(bps, func(x, y prompt.Breakpoint) int { return x.Block - y.Block })
	seen5m := false
	for i, bp := range bps {
		if bp.Block < 0 || bp.Block >= len(req.Blocks) || !req.Blocks[bp.Block].Cacheable {
			return nil, &APIError{Status: 400, Kind: ErrNotCacheable, Msg: fmt.Sprintf("cache_control on block %d of %d, which cannot carry it", bp.Block, len(req.Blocks))}
		}
		if i > 0 && bps[i-1].Block == bp.Block {
			return nil, &APIError{Status: 400, Kind: ErrNotCacheable, Msg: fmt.Sprintf("two cache_control marks on block %d", bp.Block)}
		}
		switch bp.TTL {
		case prompt.TTL5m:
			seen5m = true
		case prompt.TTL1h:
			if seen5m {
				return nil, &APIError{Status: 400, Kind: ErrTTLOrder, Msg: fmt.Sprintf("a ttl=1h cache_control (block %d) must not come after a ttl=5m one", bp.Block)}
			}
		default:
			return nil, &APIError{Status: 400, Kind: ErrInvalidTTL, Msg: fmt.Sprintf("cache_control ttl %s on block %d: want 5m or 1h", bp.TTL, bp.Block)}
		}
	}
	return bps, nil
}

// ClearToolUses is Anthropic's server-side tool-result clearing
// (clear_tool_uses_20250919, reference/providers.md §1.6). When the prompt
// reaches Trigger tokens, the results of all tool uses but the last Keep
// are replaced by a placeholder, oldest first, skipping tools named in
// ExcludeTools; if that would reclaim fewer than ClearAtLeast tokens nothing
// is cleared. The edit applies to what the server bills and caches only:
// the cached prefix breaks at the first newly cleared result, and the client
// keeps its full history. Start from DefaultClearToolUses.
//
// Simplifications: a tool result block is one tool use (parallel results
// count one each); clear_tool_inputs is not modelled; the placeholder
// replaces the block's whole size, message framing included. An edited
// request costs O(blocks after the first cleared one) to rehash.
type ClearToolUses struct {
	Trigger      int      `json:"trigger"`
	Keep         int      `json:"keep"`
	ClearAtLeast int      `json:"clear_at_least"`
	ExcludeTools []string `json:"exclude_tools,omitempty"`
	// Placeholder is the size in tokens of the text a cleared result
	// becomes.
	Placeholder int `json:"placeholder"`
}

// DefaultClearToolUses is the API's default strategy: trigger at 100k input
// tokens, keep the last 3 tool uses.
func DefaultClearToolUses() ClearToolUses {
	return ClearToolUses{Trigger: 100000, Keep: 3, Placeholder: 10}
}

// A view is the prompt as the server sees it: the request's blocks up to
// from, then rehashed blocks after a server-side edit.
type view struct {
	b      []prompt.Block
	from   int
	chains []uint64
	ends   []int
	total  int
	// sysSalt and msgSalt key the system and messages entries on the
	// request settings that invalidate them (0: the defaults, no salt).
	sysSalt, msgSalt uint64
}

// Chain implements Prefix. A system or messages block's key is its chain
// salted with the settings that section's cache depends on, so an entry
// written under other settings is not found: the "What invalidates the
// cache" table of the prompt-caching page (reference/providers.md §1.2).
// Salting the key, not the chain, costs O(1) per lookup instead of a
// rehash of the prompt.
func (v *view) Chain(i int) uint64 {
	c := v.b[i].Chain
	if i >= v.from {
		c = v.chains[i-v.from]
	}
	switch v.b[i].Section {
	case prompt.System:
		if v.sysSalt != 0 {
			c = mix(c, v.sysSalt)
		}
	case prompt.Messages:
		if v.msgSalt != 0 {
			c = mix(c, v.msgSalt)
		}
	}
	return c
}

// salts sets the view's salts from the request settings p: web search and
// citations toggles invalidate system and messages; tool_choice and
// thinking parameters, messages only (reference/providers.md §1.2). The
// defaults salt nothing, so a request that sets none keys as it always did.
func (v *view) salts(p prompt.Params) {
	if p == (prompt.Params{}) {
		return
	}
	d := xxhash.New()
	flags := [2]byte{}
	if p.WebSearch {
		flags[0] = 1
	}
	if p.Citations {
		flags[1] = 1
	}
	if p.WebSearch || p.Citations {
		d.Write([]byte("system\x00"))
		d.Write(flags[:])
		v.sysSalt = d.Sum64()
		d.Reset()
	}
	d.Write([]byte("messages\x00"))
	d.Write(flags[:])
	d.WriteString(p.ToolChoice)
	d.Write([]byte{0})
	d.WriteString(p.Thinking)
	v.msgSalt = d.Sum64()
}

// End implements Prefix.
func (v *view) End(i int) int {
	if i < v.from {
		return v.b[i].End
	}
	return v.ends[i-v.from]
}

func (c *ClearToolUses) apply(req *prompt.Request) view {
	v := view{b: req.Blocks, from: len(req.Blocks), total: req.Total}
	if c == nil || req.Total < c.Trigger {
		return v
	}
	var results []int
	var names map[string]string // tool_use id → tool name
	for i := range req.Blocks {
		b := &req.Blocks[i]
		switch {
		case b.Section != prompt.Messages || b.Src == nil:
		case b.Kind == traces.ToolResultBlock:
			results = append(results, i)
		case b.Kind == traces.ToolUse && len(c.ExcludeTools) > 0:
			if names == nil {
				names = map[string]string{}
			}
			names[b.Src.ID] = b.Src.Name
		}
	}
	n := len(results) - c.Keep
	if n <= 0 {
		return v
	}
	var cleared []int
	reclaimed := 0
	for _, i := range results[:n] {
		b := &req.Blocks[i]
		if b.Tokens <= c.Placeholder || slices.Contains(c.ExcludeTools, names[b.Src.ID]) {
			continue
		}
		cleared = append(cleared, i)
		reclaimed += b.Tokens - c.Placeholder
	}
	if len(cleared) == 0 || reclaimed < c.ClearAtLeast {
		return v
	}
	v.from = cleared[0]
	var prev uint64
	end := 0
	if v.from > 0 {
		prev, end = req.Blocks[v.from-1].Chain, req.Blocks[v.from-1].End
	}
	v.chains = make([]uint64, 0, len(req.Blocks)-v.from)
	v.ends = make([]int, 0, len(req.Blocks)-v.from)
	k := 0
	for i := v.from; i < len(req.Blocks); i++ {
		h, tok := req.Blocks[i].Hash, req.Blocks[i].Tokens
		if k < len(cleared) && cleared[k] == i {
			h, tok = mix(h, placeholderSalt), c.Placeholder
			k++
		}
		prev = mix(prev, h)
		end += tok
		v.chains = append(v.chains, prev)
		v.ends = append(v.ends, end)
	}
	v.total = req.Total - reclaimed
	return v
}

const placeholderSalt = 0x636c656172656421 // "cleared!"

func mix(a, b uint64) uint64 {
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], a)
	binary.LittleEndian.PutUint64(buf[8:], b)
	return xxhash.Sum64(buf[:])
}

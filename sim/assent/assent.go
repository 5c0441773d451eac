package assent

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
)

// Options configure a replay.
type Options struct {
	// Prices price both sides and give the providers their rules; nil is
	// pricing.Default().
	Prices *pricing.Card
	// Seed drives the OpenAI provider's idle lifetimes (common to every
	// call of a tenant).
	Seed uint64
	// subPrefixes replays with the engine's Anthropic provider rule
	// (entries inside written ones), for the test that pins why the
	// replay of captures does without.
	subPrefixes bool
	// noRouteKey replays OpenAI calls without their prompt_cache_key (one
	// cache for the tenant), for the test that pins routing by it.
	noRouteKey bool
}

// A Call is one captured call, its bill and its replay's.
type Call struct {
	Session string `json:"session"`
	// Event is the call's event index in its session.
	Event    int          `json:"event"`
	Time     time.Time    `json:"time"`
	Model    string       `json:"model"`
	API      string       `json:"api"`
	Recorded traces.Usage `json:"recorded"`
	Replayed traces.Usage `json:"replayed"`
	// RecordedUSD and ReplayedUSD price both at the model's rates.
	RecordedUSD float64 `json:"recorded_usd"`
	ReplayedUSD float64 `json:"replayed_usd"`
	// Outside says the bill read a prefix no earlier request of the
	// capture sent (see the package doc): pre-written before the call.
	Outside bool `json:"outside,omitempty"`
	// Error is the provider's refusal of the replayed request.
	Error string `json:"error,omitempty"`
	// Cut says the capture tool shortened the request (capture.MetaCut):
	// a difference inside what it cut cannot be replayed.
	Cut bool `json:"cut,omitempty"`
}

// Exact reports whether the replay billed every token class as recorded
// (output is replayed as recorded and not compared).
func (c *Call) Exact() bool {
	r, p := c.Recorded, c.Replayed
	r.Output, p.Output = 0, 0
	return c.Error == "" && r == p
}

// ReadExact reports whether the replay read what the bill read.
func (c *Call) ReadExact() bool { return c.Error == "" && c.Recorded.CacheRead == c.Replayed.CacheRead }

// A Report is a replay of every call of a set of sessions.
type Report struct {
	Calls []Call `json:"calls"`
	// Conflicts counts the bill positions the sizing could not honour
	// (a read or write ending before a boundary an earlier bill placed
	// further on): each is a call whose size the bills contradict.
	Conflicts int `json:"size_conflicts"`
	// Records are the calls as the engine's records (one per call, in
	// Calls' order, Policy Name), for the summaries and reports every
	// other policy's replay makes (the as-sent policy of compare, whatif
	// and check).
	Records []sim.Record `json:"-"`
}

// Name is the as-sent policy's name (cacheplan.AsSent's).
const Name = "as-sent"

// A Summary is the totals of a set of calls (all of a report's, or one
// API's).
type Summary struct {
	Calls     int `json:"calls"`
	Exact     int `json:"exact"`
	ReadExact int `json:"read_exact"`
	Outside   int `json:"outside"`
	// Cut counts the calls whose request the capture tool cut short,
	// CutExact those of them the replay billed exactly.
	Cut         int     `json:"cut"`
	CutExact    int     `json:"cut_exact"`
	RecordedUSD float64 `json:"recorded_usd"`
	ReplayedUSD float64 `json:"replayed_usd"`
	// ErrorPct is the error of the replayed total against the recorded.
	ErrorPct float64 `json:"error_pct"`
	// ReadMatchPct is the share of calls whose read is exact.
	ReadMatchPct float64 `json:"read_match_pct"`
}

// Summarize totals the calls keep accepts (all when keep is nil).
func (r *Report) Summarize(keep func(*Call) bool) Summary {
	var s Summary
	for i := range r.Calls {
		c := &r.Calls[i]
		if keep != nil && !keep(c) {
			continue
		}
		s.Calls++
		if c.Exact() {
			s.Exact++
		}
		if c.ReadExact() {
			s.ReadExact++
		}
		if c.Outside {
			s.Outside++
		}
		if c.Cut {
			s.Cut++
			if c.Exact() {
				s.CutExact++
			}
		}
		s.RecordedUSD += c.RecordedUSD
		s.ReplayedUSD += c.ReplayedUSD
	}
	if s.RecordedUSD > 0 {
		s.ErrorPct = 100 * (s.ReplayedUSD - s.RecordedUSD) / s.RecordedUSD
	}
	if s.Calls > 0 {
		s.ReadMatchPct = 100 * float64(s.ReadExact) / float64(s.Calls)
	}
	return s
}

// Replay replays every billed call of sessions as sent, each tenant
// (account) against its own providers, its calls in time order.
func Replay(ctx context.Context, sessions []*traces.Session, o Options) (*Report, error) {
	if o.Prices == nil {
		o.Prices = pricing.Default()
	}
	byTenant := map[string][]*traces.Session{}
	var tenants []string
	for _, s := range sessions {
		t := s.TenantID()
		if _, ok := byTenant[t]; !ok {
			tenants = append(tenants, t)
		}
		byTenant[t] = append(byTenant[t], s)
	}
	rep := &Report{}
	for _, t := range tenants {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := replayTenant(t, byTenant[t], o, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// A wire is one call's request as sent, before sizing.
type wire struct {
	sess   *traces.Session
	event  int
	at     time.Time
	model  string
	api    string
	key    string
	route  string         // OpenAI's prompt_cache_key as sent
	blocks []prompt.Block // Hash, Chain, Section, Role, Msg, Kind, Cacheable, Src
	est    []int          // a rough local size of each block (the shape)
	sent   []prompt.Breakpoint
	auto   prompt.TTL
	params prompt.Params
	usage  traces.Usage
	turn   int // the user messages before the call, from 0
	// hosted says the response ran a hosted tool and went on
	// (capture.MetaHosted): its bill is not its request's prompt.
	hosted bool
	cut    bool
	// ends are the blocks' sized ends; total the billed prompt.
	ends    []int
	total   int
	outside int // the block of a read from outside the capture, or -1
}

func replayTenant(tenant string, ss []*traces.Session, o Options, rep *Report) error {
	var ws []*wire
	for _, s := range ss {
		w, err := wires(s)
		if err != nil {
			return err
		}
		ws = append(ws, w...)
	}
	if o.noRouteKey {
		for _, w := range ws {
			w.route = ""
		}
	}
	// Time order; a stable sort keeps a session's calls, and sessions,
	// in their order at equal times (claude-tap times are to the second).
	slices.SortStableFunc(ws, func(a, b *wire) int { return a.at.Compare(b.at) })
	rep.Conflicts += size(ws)

	seed := xxhash.Sum64String(tenant) ^ o.Seed
	provs := map[string]provider.Provider{}
	prov := func(api string) (provider.Provider, error) {
		name := "anthropic"
		if api != capture.Anthropic {
			name = "openai"
		}
		if p, ok := provs[name]; ok {
			return p, nil
		}
		p, err := provider.ByName(name, provider.Options{Common: provider.Common{Prices: o.Prices},
			Anthropic: provider.AnthropicOptions{BreakpointsOnly: !o.subPrefixes},
			OpenAI:    provider.OpenAIOptions{Rand: rand.New(rand.NewPCG(seed, 0x6173736e74))}})
		provs[name] = p
		return p, err
	}
	var last time.Time
	planner := cacheplan.AsSent{}
	seq := map[string]int{} // each session's records numbered in time order
	for _, w := range ws {
		p, err := prov(w.api)
		if err != nil {
			return err
		}
		now := w.at
		if now.Before(last) {
			now = last
		}
		if w.outside >= 0 {
			pre := w.request(w.outside + 1)
			pre.Sent = []prompt.Breakpoint{{Block: w.outside, TTL: prompt.TTL1h}}
			if w.api != capture.Anthropic {
				pre.Sent = nil
			}
			planner.Plan(pre, prompt.NoCache)
			pre.Freeze()
			// A minute before the call, so that it is readable by then
			// (the OpenAI provider takes times in order only).
			at := now.Add(-time.Minute)
			if w.api != capture.Anthropic && at.Before(last) {
				at = last
			}
			_, _ = p.Send(at, pre) // not a call of the capture: not recorded
		}
		req := w.request(len(w.blocks))
		planner.Plan(req, prompt.NoCache)
		req.Freeze()
		resp, err := p.Send(now, req)
		c := Call{Session: w.sess.ID, Event: w.event, Time: w.at, Model: w.model, API: w.api,
			Recorded: w.usage, Outside: w.outside >= 0, Cut: w.cut}
		price, perr := o.Prices.Lookup(w.model)
		if perr != nil {
			return fmt.Errorf("session %s: event %d: %w", w.sess.ID, w.event, perr)
		}
		c.RecordedUSD = price.Cost(w.usage)
		window := max(w.sess.Window, price.Window)
		rec := sim.Record{Trace: w.sess.ID, Policy: Name, Seq: seq[w.sess.ID], Kind: sim.KindCall, Time: now, Event: w.event,
			Turn: w.turn, Model: w.model, Window: window, Prompt: req.Total, Breakpoints: len(req.Breakpoints),
			Recorded: &w.usage, RecordedCostUSD: c.RecordedUSD}
		seq[w.sess.ID]++
		if err != nil {
			c.Error = err.Error()
			rec.Error = c.Error
		} else {
			c.Replayed = resp.Usage
			c.ReplayedUSD = price.Cost(resp.Usage)
			rec.Usage, rec.CostUSD = resp.Usage, c.ReplayedUSD
			rec.TTFTMS, rec.LatencyMS = resp.TTFT.Milliseconds(), resp.Latency().Milliseconds()
			rec.MissReason, rec.MissTokens = resp.Miss.Reason, resp.Miss.Tokens
		}
		rep.Calls = append(rep.Calls, c)
		rep.Records = append(rep.Records, rec)
		last = now
	}
	for _, p := range provs {
		provider.Release(p)
	}
	return nil
}

// request is the first n blocks of w as a prompt.Request, sized.
func (w *wire) request(n int) *prompt.Request {
	req := &prompt.Request{Model: w.model, Key: w.sess.ID, RouteKey: w.route, Output: int(w.usage.Output), Params: w.params, Automatic: w.auto}
	req.Blocks = slices.Clone(w.blocks[:n])
	prev := 0
	for i := range req.Blocks {
		req.Blocks[i].End = w.ends[i]
		req.Blocks[i].Tokens = w.ends[i] - prev
		prev = w.ends[i]
	}
	req.Total = prev
	if n == len(w.blocks) {
		req.Total = max(prev, w.total)
		for _, bp := range w.sent {
			if bp.Block < n {
				req.Sent = append(req.Sent, bp)
			}
		}
	}
	return req
}

func mix(a, b uint64, tag byte) uint64 {
	var buf [17]byte
	binary.LittleEndian.PutUint64(buf[:8], a)
	binary.LittleEndian.PutUint64(buf[8:16], b)
	buf[16] = tag
	return xxhash.Sum64(buf[:])
}

// wires rebuilds each billed call's request of s from its events: the
// floor in force, every message before it (one event is one message of
// the request, as the capture importer writes them), the markers and
// settings kept on the call.
func wires(s *traces.Session) ([]*wire, error) {
	var tools, system []traces.Block
	setFloor := func(f []traces.Block) {
		tools, system = nil, nil
		for _, b := range f {
			if b.Kind == traces.ToolSchema {
				tools = append(tools, b)
			} else {
				system = append(system, b)
			}
		}
	}
	setFloor(s.Floor)
	type msg struct {
		role prompt.Role
		ev   int
	}
	var msgs []msg
	var out []*wire
	turn := -1
	for i := range s.Events {
		e := &s.Events[i]
		switch e.Kind {
		case traces.FloorChange:
			if len(e.Blocks) > 0 {
				setFloor(e.Blocks)
			}
			continue
		case traces.User, traces.ToolResult:
			role := prompt.RoleUser
			if e.Meta[capture.MetaRole] == "system" {
				role = prompt.RoleSystem
			} else if e.Kind == traces.User {
				turn++
			}
			msgs = append(msgs, msg{role, i})
			continue
		case traces.Assistant:
		default:
			continue
		}
		if e.Usage == nil || e.Meta[traces.MetaCopied] == "true" {
			msgs = append(msgs, msg{prompt.RoleAssistant, i})
			continue
		}
		w := &wire{sess: s, event: i, at: e.Time, model: e.Model, api: cmp.Or(e.Meta[capture.MetaAPI], capture.Anthropic),
			key: s.ID, route: e.Meta[capture.MetaCacheKey], usage: *e.Usage, turn: max(turn, 0), outside: -1}
		if w.model == "" {
			w.model = s.Model
		}
		var chain uint64
		add := func(b *traces.Block, sec prompt.Section, role prompt.Role, m int) {
			h := mix(b.Hash(), uint64(role), byte(sec))
			chain = mix(chain, h, 0)
			w.blocks = append(w.blocks, prompt.Block{Hash: h, Chain: chain, Msg: m, Section: sec, Role: role, Kind: b.Kind,
				Cacheable: b.Kind != traces.Thinking && (b.Text != "" || b.Input != "" || b.Tokens > 0), Src: b})
			w.est = append(w.est, rough(b))
		}
		for j := range tools {
			add(&tools[j], prompt.Tools, prompt.RoleSystem, -1)
		}
		for j := range system {
			add(&system[j], prompt.System, prompt.RoleSystem, -1)
		}
		starts := make([]int, len(msgs)+1)
		for m, ms := range msgs {
			starts[m] = len(w.blocks)
			ev := &s.Events[ms.ev]
			for j := range ev.Blocks {
				add(&ev.Blocks[j], prompt.Messages, ms.role, m)
			}
		}
		starts[len(msgs)] = len(w.blocks)
		marks, err := capture.ParseMarks(e.Meta[capture.MetaMarks])
		if err != nil {
			return nil, fmt.Errorf("session %s: event %d: %w", s.ID, i, err)
		}
		for _, mk := range marks {
			at := -1
			switch mk.Section {
			case capture.SecTools:
				at = mk.Index
				if at >= len(tools) {
					at = -1
				}
			case capture.SecSystem:
				if mk.Index < len(system) {
					at = len(tools) + mk.Index
				}
			case capture.SecMessages:
				if mk.Index < len(msgs) && starts[mk.Index]+mk.Block < starts[mk.Index+1] {
					at = starts[mk.Index] + mk.Block
				}
			}
			if at < 0 {
				return nil, fmt.Errorf("session %s: event %d: cache_control %s:%s is past the request the events rebuild", s.ID, i, mk.Section, strconv.Itoa(mk.Index))
			}
			ttl := prompt.TTL5m
			if mk.TTL == "1h" {
				ttl = prompt.TTL1h
			}
			w.sent = append(w.sent, prompt.Breakpoint{Block: at, TTL: ttl})
		}
		switch e.Meta[capture.MetaAutomatic] {
		case "5m":
			w.auto = prompt.TTL5m
		case "1h":
			w.auto = prompt.TTL1h
		}
		w.params = params(e.Meta, tools)
		w.hosted = w.api != capture.Anthropic && e.Meta[capture.MetaHosted] != ""
		w.cut = e.Meta[capture.MetaCut] != ""
		out = append(out, w)
		msgs = append(msgs, msg{prompt.RoleAssistant, i})
	}
	return out, nil
}

// rough is a block's local size, the shape the bills' tokens are shared
// out by: about 4 characters a token, an opaque block its given size.
func rough(b *traces.Block) int {
	if b.Opaque() {
		return b.Tokens
	}
	return 1 + (len(b.Text)+len(b.Input)+len(b.Name)+len(b.ID))/4
}

// params are the request settings the Anthropic cache keys on, from the
// call's capture meta: thinking ("adaptive", "enabled:BUDGET", "" when
// off), tool_choice ("" when auto), web search (a web_search server tool
// among the tools).
func params(meta map[string]string, tools []traces.Block) prompt.Params {
	var p prompt.Params
	var th struct {
		Type   string `json:"type"`
		Budget int    `json:"budget_tokens"`
	}
	if json.Unmarshal([]byte(meta[capture.MetaThinking]), &th) == nil {
		switch th.Type {
		case "enabled":
			p.Thinking = "enabled:" + strconv.Itoa(th.Budget)
		case "", "disabled":
		default:
			p.Thinking = th.Type
		}
	}
	var tc struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(meta[capture.MetaToolChoice]), &tc) == nil && tc.Type != "" && tc.Type != "auto" {
		p.ToolChoice = strings.TrimSuffix(tc.Type+":"+tc.Name, ":")
	}
	for _, t := range tools {
		if strings.Contains(t.Input, `"type":"web_search_`) {
			p.WebSearch = true
		}
	}
	return p
}

// String names the call and its two bills, as a line of a report.
func (c *Call) String() string {
	s := fmt.Sprintf("%s event %d (%s): recorded %s, replayed %s", c.Session, c.Event, c.API, usageString(c.Recorded), usageString(c.Replayed))
	if c.Outside {
		s += " (read from outside the capture)"
	}
	if c.Cut {
		s += " (request cut short by the capture tool)"
	}
	if c.Error != "" {
		s += ": " + c.Error
	}
	return s
}

func usageString(u traces.Usage) string {
	return fmt.Sprintf("in %d / write 5m %d 1h %d / read %d", u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead)
}

package provider

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
)

func openaiCard() *pricing.Card {
	return pricing.NewCard(
		pricing.Price{Model: "gpt", Provider: "openai", Input: 2, Output: 8, CacheWrite5m: 2, CacheRead: 0.5, Window: 100000, MinCacheable: 1024},
		pricing.Price{Model: "gpt2", Provider: "openai", Input: 2, Output: 8, CacheWrite5m: 2, CacheRead: 0.5, Window: 100000},
		pricing.Price{Model: "ds", Provider: "deepseek", Input: 0.27, Output: 1.1, CacheRead: 0.07, Window: 100000},
	)
}

func newTestOpenAI(t *testing.T, o OpenAIOptions) *OpenAI {
	t.Helper()
	o.Prices, o.Latency = openaiCard(), zeroLatency
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(1, 2))
	}
	p, err := NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A step is one call of a conversation: grow the view, send at a time,
// expect a cached count.
type step struct {
	at     time.Duration
	grow   func(c *convo)
	cached int64
}

func runSteps(t *testing.T, p Provider, c *convo, steps []step) {
	t.Helper()
	for i, s := range steps {
		if s.grow != nil {
			s.grow(c)
		}
		r := c.req(prompt.NoCache)
		resp, err := p.Send(t0.Add(s.at), r)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Usage.CacheRead != s.cached {
			t.Errorf("call %d: cached %d, want %d", i, resp.Usage.CacheRead, s.cached)
		}
		u, w := resp.Usage, resp.Wire
		if u.Prompt() != int64(r.Total) || w.PromptTokens != int64(r.Total) || w.CachedTokens != u.CacheRead || u.Input != w.PromptTokens-w.CachedTokens || u.Writes() != 0 {
			t.Errorf("call %d: usage %+v and wire %+v disagree (prompt %d)", i, u, w, r.Total)
		}
	}
}

func TestOpenAIRules(t *testing.T) {
	more := func(n int) func(c *convo) { return func(c *convo) { c.add(prompt.RoleUser, n) } }
	tests := []struct {
		name  string
		opts  OpenAIOptions
		sys   int
		steps []step
	}{
		{"below 1024 nothing is cached", OpenAIOptions{}, 1000, []step{{0, nil, 0}, {time.Second, more(10), 0}}},
		// Hit 3000 → 1024 + 15·128.
		{"hits count in 128-token steps from 1024", OpenAIOptions{}, 3000, []step{{0, nil, 0}, {time.Second, more(10), 2944}}},
		{"exactly 1024 is cached", OpenAIOptions{}, 1024, []step{{0, nil, 0}, {time.Second, more(10), 1024}}},
		{"a fixed idle lifetime", OpenAIOptions{IdleMin: 5 * time.Minute, IdleMax: 5 * time.Minute}, 3000, []step{
			{0, nil, 0}, {5*time.Minute - time.Second, nil, 2944}, {10*time.Minute + time.Second, nil, 0}}},
		{"a hit starts a new idle period", OpenAIOptions{IdleMin: 5 * time.Minute, IdleMax: 5 * time.Minute}, 3000, []step{
			{0, nil, 0}, {4 * time.Minute, nil, 2944}, {8 * time.Minute, nil, 2944}, {12 * time.Minute, nil, 2944}}},
		{"the 5-10 minute band: alive before 5", OpenAIOptions{}, 3000, []step{{0, nil, 0}, {5*time.Minute - time.Second, nil, 2944}}},
		{"the 5-10 minute band: gone after 10", OpenAIOptions{}, 3000, []step{{0, nil, 0}, {10*time.Minute + time.Second, nil, 0}}},
		{"idle is capped at 1h", OpenAIOptions{IdleMin: 2 * time.Hour, IdleMax: 2 * time.Hour}, 3000, []step{
			{0, nil, 0}, {59 * time.Minute, nil, 2944}, {119*time.Minute + time.Second, nil, 0}}},
		{"24h retention keeps up to 24h", OpenAIOptions{Retention: Extended, ExtendedMin: 30 * time.Hour, ExtendedMax: 30 * time.Hour}, 3000, []step{
			{0, nil, 0}, {23 * time.Hour, nil, 2944}, {47*time.Hour + time.Second, nil, 0}}},
		{"24h retention of an older model: the extended band", OpenAIOptions{Retention: Extended}, 3000, []step{
			{0, nil, 0}, {11*time.Minute - time.Second, nil, 2944}, {36*time.Minute + time.Second, nil, 0}}},
		{"a changed block ends the hit", OpenAIOptions{}, 3000, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500).add(prompt.RoleUser, 500) }, 0},
			{time.Second, func(c *convo) { c.v.Messages = c.v.Messages[:1]; c.add(prompt.RoleUser, 500) }, 3456}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, newTestOpenAI(t, tt.opts), newConvoModel(t, tt.sys, "gpt"), tt.steps)
		})
	}
}

func newConvoModel(t *testing.T, sys int, model string) *convo {
	c := newConvo(t, sys)
	c.model = model
	return c
}

func TestOpenAISeededEviction(t *testing.T) {
	// Inside the band the outcome depends on the draw: the same seed gives
	// the same outcomes, and over many seeds both outcomes occur.
	outcome := func(seed uint64) int64 {
		p := newTestOpenAI(t, OpenAIOptions{Rand: rand.New(rand.NewPCG(seed, 0))})
		c := newConvoModel(t, 3000, "gpt")
		send(t, p, t0, c.req(prompt.NoCache))
		return send(t, p, t0.Add(7*time.Minute+30*time.Second), c.req(prompt.NoCache)).CacheRead
	}
	hits := 0
	for seed := range uint64(40) {
		a, b := outcome(seed), outcome(seed)
		if a != b {
			t.Fatalf("seed %d: %d then %d", seed, a, b)
		}
		if a > 0 {
			hits++
		}
	}
	if hits == 0 || hits == 40 {
		t.Errorf("at 7.5 min %d of 40 seeds hit, want some but not all", hits)
	}
}

func TestOpenAIOptionsAndErrors(t *testing.T) {
	if _, err := NewOpenAI(OpenAIOptions{}); err == nil {
		t.Error("in-memory retention without a Rand was accepted")
	}
	if _, err := NewOpenAI(OpenAIOptions{Retention: "forever"}); err == nil {
		t.Error("an unknown retention was accepted")
	}
	p := newTestOpenAI(t, OpenAIOptions{})
	c := newConvoModel(t, 100000, "gpt")
	if _, err := p.Send(t0, c.req(prompt.NoCache)); !errors.Is(err, ErrContextOverflow) {
		t.Errorf("100001 tokens in a 100000 window: %v", err)
	}
	// A model switch starts cold; no MinCacheable on the card means 1024.
	c = newConvoModel(t, 3000, "gpt")
	send(t, p, t0, c.req(prompt.NoCache))
	c.model = "gpt2"
	if u := send(t, p, t0.Add(time.Second), c.req(prompt.NoCache)); u.CacheRead != 0 {
		t.Errorf("after a model switch: cached %d", u.CacheRead)
	}
	if u := send(t, p, t0.Add(2*time.Second), c.req(prompt.NoCache)); u.CacheRead != 2944 {
		t.Errorf("gpt2 second call: cached %d, want 2944", u.CacheRead)
	}
}

func newTestDeepSeek(o DeepSeekOptions) *DeepSeek {
	o.Prices, o.Latency = openaiCard(), zeroLatency
	return NewDeepSeek(o)
}

func TestDeepSeekRules(t *testing.T) {
	tests := []struct {
		name  string
		opts  DeepSeekOptions
		steps []step
	}{
		{"A+B then A+B+C hits A+B", DeepSeekOptions{}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 300) }, 0},
			{time.Second, func(c *convo) { c.add(prompt.RoleUser, 200) }, 2300}}},
		{"A+B, A+C misses, then A+D hits A", DeepSeekOptions{}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 300) }, 0},
			{time.Second, func(c *convo) { c.v.Messages = c.v.Messages[:0]; c.add(prompt.RoleUser, 301) }, 0},
			{2 * time.Second, func(c *convo) { c.v.Messages = c.v.Messages[:0]; c.add(prompt.RoleUser, 302) }, 2000}}},
		{"the end of the output is a unit", DeepSeekOptions{}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 300) }, 0},
			{time.Second, func(c *convo) { c.add(prompt.RoleAssistant, 80).add(prompt.RoleTool, 500) }, 2380}}},
		// Ends 2000, 5000, 8000, 11000: units at 4096 (inside block 1) and
		// 8192 (inside block 3, which is also the input's end, 11000).
		{"fixed intervals inside long inputs", DeepSeekOptions{}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 3000).add(prompt.RoleUser, 3000).add(prompt.RoleUser, 3000) }, 0},
			{time.Second, func(c *convo) { c.v.Messages = c.v.Messages[:1]; c.add(prompt.RoleUser, 10) }, 4096}}},
		{"units under 64 tokens are not cached", DeepSeekOptions{}, []step{
			{0, func(c *convo) { c.v.System = nil; c.add(prompt.RoleUser, 50) }, 0},
			{time.Second, func(c *convo) { c.add(prompt.RoleUser, 50) }, 0}}},
		{"unused units expire", DeepSeekOptions{Retention: time.Hour}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 300) }, 0},
			{59 * time.Minute, nil, 2300},
			{2*time.Hour + time.Second, nil, 0}}},
		{"units are readable after the build delay", DeepSeekOptions{BuildDelay: 5 * time.Second}, []step{
			{0, func(c *convo) { c.add(prompt.RoleUser, 300) }, 0},
			{4 * time.Second, nil, 0},
			{6 * time.Second, nil, 2300}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, newTestDeepSeek(tt.opts), newConvoModel(t, 2000, "ds"), tt.steps)
		})
	}
}

func newTestVLLM(t *testing.T, capacity int) *VLLM {
	t.Helper()
	p, err := NewVLLM(VLLMOptions{Capacity: capacity, Common: Common{Latency: zeroLatency}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVLLMRules(t *testing.T) {
	t.Run("only full 16-token blocks are reused", func(t *testing.T) {
		runSteps(t, newTestVLLM(t, 1<<20), newConvoModel(t, 1000, "q"), []step{
			{0, nil, 0}, {time.Second, func(c *convo) { c.add(prompt.RoleUser, 100) }, 992}, {time.Hour, func(c *convo) { c.add(prompt.RoleUser, 7) }, 1088}})
	})
	t.Run("the last token is always computed", func(t *testing.T) {
		p := newTestVLLM(t, 1<<20)
		c := newConvoModel(t, 1023, "q")
		c.b.Wire.Tail = 0 // the prompt ends at the block's end: 1023 tokens
		runSteps(t, p, c, []step{{0, nil, 0}, {time.Second, nil, 1008}})
	})
	t.Run("LRU eviction under capacity, tail first", func(t *testing.T) {
		p := newTestVLLM(t, 3000)
		a := newConvoModel(t, 1000, "q").add(prompt.RoleUser, 1000) // ends 1000, 2000
		b := newConvoModel(t, 0, "q")
		b.v.System = nil
		b.add(prompt.RoleUser, 1500)
		send(t, p, t0, a.req(prompt.NoCache))
		send(t, p, t0.Add(time.Second), b.req(prompt.NoCache)) // 2000 + 1488 > 3000: trim a's tail
		if u := send(t, p, t0.Add(2*time.Second), b.req(prompt.NoCache)); u.CacheRead != 1488 {
			t.Errorf("b (most recent): cached %d, want 1488", u.CacheRead)
		}
		if u := send(t, p, t0.Add(3*time.Second), a.req(prompt.NoCache)); u.CacheRead != 992 {
			t.Errorf("a (evicted from the tail): cached %d, want 992", u.CacheRead)
		}
	})
	t.Run("a model switch starts cold", func(t *testing.T) {
		p := newTestVLLM(t, 1<<20)
		c := newConvoModel(t, 1000, "q")
		send(t, p, t0, c.req(prompt.NoCache))
		c.model = "r"
		if u := send(t, p, t0.Add(time.Second), c.req(prompt.NoCache)); u.CacheRead != 0 {
			t.Errorf("cached %d after a switch", u.CacheRead)
		}
	})
	if _, err := NewVLLM(VLLMOptions{}); err == nil {
		t.Error("vllm without a capacity was accepted")
	}
}

func TestByName(t *testing.T) {
	o := Options{Common: Common{Prices: openaiCard()}}
	o.OpenAI.Rand = rand.New(rand.NewPCG(1, 1))
	o.VLLM.Capacity = 1 << 20
	for _, n := range Names() {
		p, err := ByName(n, o)
		if err != nil || p.Name() != n {
			t.Errorf("ByName(%q) = %v, %v", n, p, err)
			continue
		}
		// "gpt" is only on o's card: a provider that lost the shared
		// options would not know its price.
		c := newConvo(t, 2000).blocks(3, 500)
		c.model = "gpt"
		r := c.req(prompt.TTL5m, -1)
		if u := send(t, p, t0, r); u.Prompt() != int64(r.Total) {
			t.Errorf("%s: billed a %d-token prompt as %+v", n, r.Total, u)
		}
	}
	if _, err := ByName("bedrock", o); err == nil {
		t.Error("an unknown provider was accepted")
	}
}

func TestOpenAIEntryReadableAfterTTFT(t *testing.T) {
	lat := Latency{Floor: 2 * time.Second}
	p, err := NewOpenAI(OpenAIOptions{Common: Common{Prices: openaiCard(), Latency: &lat}, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	c := newConvoModel(t, 3000, "gpt")
	send(t, p, t0, c.req(prompt.NoCache))
	if u := send(t, p, t0.Add(time.Second), c.req(prompt.NoCache)); u.CacheRead != 0 {
		t.Errorf("a concurrent request read %d, want 0", u.CacheRead)
	}
	if u := send(t, p, t0.Add(2*time.Second), c.req(prompt.NoCache)); u.CacheRead != 2944 {
		t.Errorf("at TTFT: read %d, want 2944", u.CacheRead)
	}
}

// TestOpenAIRetentionByModel pins the retention of each model family
// (RetentionOf, ExtendedBand): GPT-5.5 and later support only 24h, which
// keeps an idle prefix 11–25 minutes (GPT-5.5) or 14–72 minutes (GPT-5.6),
// whatever the request asks; older models default to in-memory (5–10
// minutes) and honour an asked 24h.
func TestOpenAIRetentionByModel(t *testing.T) {
	for _, tt := range []struct {
		model       string
		r           Retention
		only        bool
		extLo, extH time.Duration
	}{
		{"gpt-5.4", InMemory, false, 11 * time.Minute, 25 * time.Minute},
		{"gpt-5-codex", InMemory, false, 11 * time.Minute, 25 * time.Minute},
		{"gpt-4.1", InMemory, false, 11 * time.Minute, 25 * time.Minute},
		{"o3", InMemory, false, 11 * time.Minute, 25 * time.Minute},
		{"gpt-5.5", Extended, true, 11 * time.Minute, 25 * time.Minute},
		{"gpt-5.5-pro", Extended, true, 11 * time.Minute, 25 * time.Minute},
		{"openai/gpt-5.6-sol", Extended, true, 14 * time.Minute, 72 * time.Minute},
		{"gpt-6", Extended, true, 14 * time.Minute, 72 * time.Minute},
	} {
		r, only := RetentionOf(tt.model)
		lo, hi := ExtendedBand(tt.model)
		if r != tt.r || only != tt.only || lo != tt.extLo || hi != tt.extH {
			t.Errorf("%s: %s (only %v), band [%v, %v]; want %s (only %v), [%v, %v]", tt.model, r, only, lo, hi, tt.r, tt.only, tt.extLo, tt.extH)
		}
	}
	card := pricing.NewCard(
		pricing.Price{Model: "gpt-5.4", Provider: "openai", Input: 2, Output: 8, CacheRead: 0.2, Window: 100000},
		pricing.Price{Model: "gpt-5.5", Provider: "openai", Input: 2, Output: 8, CacheRead: 0.2, Window: 100000},
		pricing.Price{Model: "gpt-5.6-sol", Provider: "openai", Input: 2, Output: 8, CacheRead: 0.2, Window: 100000},
	)
	read := func(o OpenAIOptions, model string, gap time.Duration) int64 {
		o.Prices, o.Latency, o.Rand = card, zeroLatency, rand.New(rand.NewPCG(1, 2))
		p, err := NewOpenAI(o)
		if err != nil {
			t.Fatal(err)
		}
		c := newConvoModel(t, 3000, model)
		send(t, p, t0, c.req(prompt.NoCache))
		return send(t, p, t0.Add(gap), c.req(prompt.NoCache)).CacheRead
	}
	for _, tt := range []struct {
		model string
		o     OpenAIOptions
		gap   time.Duration
		want  int64
	}{
		{"gpt-5.4", OpenAIOptions{}, 10*time.Minute + time.Second, 0},           // in-memory: gone after 10 minutes
		{"gpt-5.4", OpenAIOptions{Retention: Extended}, 10 * time.Minute, 2944}, // asked 24h: the extended band
		{"gpt-5.5", OpenAIOptions{Retention: InMemory}, 10 * time.Minute, 2944}, // 24h only: the ask is ignored
		{"gpt-5.5", OpenAIOptions{}, 25*time.Minute + time.Second, 0},
		{"gpt-5.6-sol", OpenAIOptions{}, 13 * time.Minute, 2944},
		{"gpt-5.6-sol", OpenAIOptions{}, 72*time.Minute + time.Second, 0},
	} {
		if got := read(tt.o, tt.model, tt.gap); got != tt.want {
			t.Errorf("%s %+v after %v: read %d, want %d", tt.model, tt.o.Retention, tt.gap, got, tt.want)
		}
	}
}

// TestOpenAIGeneratedOutput: in-memory retention caches what the model
// generated with its prompt, so a request that sends the previous call's
// output back right after its prompt reads into it, up to the output's
// size; extended retention (GPT-5.5) writes the prompt only. Corpus
// anmol0b/Trezo-Ai ff1815ba (gpt-5.4): 42,971 prompt + 874 output → the
// next call reads 43,776; the API captures (gpt-5.5) never read past the
// previous prompt.
func TestOpenAIGeneratedOutput(t *testing.T) {
	card := pricing.NewCard(
		pricing.Price{Model: "gpt-5.4", Provider: "openai", Input: 2, Output: 8, CacheRead: 0.2, Window: 100000},
		pricing.Price{Model: "gpt-5.5", Provider: "openai", Input: 2, Output: 8, CacheRead: 0.2, Window: 100000},
	)
	for _, tt := range []struct {
		model     string
		generated bool
		want      int64
	}{
		{"gpt-5.4", true, 3584},  // 3,000 + min(600 output, 700 sent back) = 3,600 → 3,584
		{"gpt-5.4", false, 2944}, // the output was not sent back as generated
		{"gpt-5.5", true, 2944},
	} {
		p, err := NewOpenAI(OpenAIOptions{Common: Common{Prices: card, Latency: zeroLatency}, Rand: rand.New(rand.NewPCG(1, 2))})
		if err != nil {
			t.Fatal(err)
		}
		c := newConvoModel(t, 3000, tt.model)
		r := c.b.Build(c.model, &c.v, 600)
		r.Key = "s"
		r.Freeze()
		send(t, p, t0, r)
		c.add(prompt.RoleAssistant, 700).add(prompt.RoleUser, 100)
		r = c.b.Build(c.model, &c.v, 10)
		r.Key = "s"
		if tt.generated {
			r.Generated = 1 // the assistant message follows the one floor block
		}
		r.Freeze()
		if got := send(t, p, t0.Add(time.Second), r).CacheRead; got != tt.want {
			t.Errorf("%s generated=%v: read %d, want %d", tt.model, tt.generated, got, tt.want)
		}
	}
}

// GPT-5.5 reads on a 512-token grid, 512·k − 128 (CacheGrid): a 3,300-token
// prefix reads 3,200 on the guide's 128 steps and 2,944 on GPT-5.5's; a
// prefix under the first grid point past the minimum (1,408) reads
// nothing.
func TestOpenAIGPT55Grid(t *testing.T) {
	card := pricing.NewCard(
		pricing.Price{Model: "gpt-5.5", Provider: "openai", Input: 5, Output: 30, CacheRead: 0.5, Window: 400000},
		pricing.Price{Model: "gpt-5.4", Provider: "openai", Input: 2.5, Output: 15, CacheRead: 0.25, Window: 400000},
	)
	for _, c := range []struct {
		model    string
		sys      int
		want     int64
		reasoned string
	}{
		{"gpt-5.5", 3300, 2944, "512·6 − 128"},
		{"gpt-5.4", 3300, 3200, "1024 + 17·128"},
		{"gpt-5.5", 17952, 17792, "512·35 − 128"},
		{"gpt-5.4", 17952, 17920, "1024 + 132·128"},
		{"gpt-5.5", 1400, 0, "896 is under the minimum"},
		{"gpt-5.5", 1408, 1408, "512·3 − 128"},
	} {
		p, err := NewOpenAI(OpenAIOptions{Common: Common{Prices: card, Latency: zeroLatency}, Rand: rand.New(rand.NewPCG(1, 2))})
		if err != nil {
			t.Fatal(err)
		}
		runSteps(t, p, newConvoModel(t, c.sys, c.model), []step{{0, nil, 0}, {time.Second, func(cv *convo) { cv.add(prompt.RoleUser, 10) }, c.want}})
		if t.Failed() {
			t.Fatalf("%s, a %d-token prefix: want %d (%s)", c.model, c.sys, c.want, c.reasoned)
		}
	}
}

// A keyed request (prompt.Request.RouteKey) reads only what requests with
// its prompt_cache_key wrote: the same 3,000-token prefix sent under
// another key reads nothing, under the same key all of it, and requests
// without a key share one cache as before.
func TestOpenAIRouteKey(t *testing.T) {
	p := newTestOpenAI(t, OpenAIOptions{})
	c := newConvoModel(t, 3000, "gpt")
	send := func(at time.Duration, key string) int64 {
		t.Helper()
		r := c.req(prompt.NoCache)
		r.RouteKey = key
		resp, err := p.Send(t0.Add(at), r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Usage.CacheRead
	}
	for i, s := range []struct {
		key  string
		want int64
	}{{"parent", 0}, {"subagent", 0}, {"parent", 2944}, {"subagent", 2944}, {"", 0}, {"", 2944}, {"other", 0}} {
		if got := send(time.Duration(i)*time.Second, s.key); got != s.want {
			t.Errorf("call %d (key %q): cached %d, want %d", i, s.key, got, s.want)
		}
	}
}

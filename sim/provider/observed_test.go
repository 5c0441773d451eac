package provider

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// observedReq renders c with breakpoints on the system block and the last
// block, and the observation fields set by set.
func observedReq(c *convo, set func(r *prompt.Request)) *prompt.Request {
	r := c.b.Build(c.model, &c.v, 7)
	r.Mark(0, prompt.TTL5m)
	r.Mark(len(r.Blocks)-1, prompt.TTL5m)
	set(r)
	r.Freeze()
	return r
}

// Observed events of a recorded log (prompt.Request.ReadLimit and
// KeepAlive) make the provider serve what the bill shows, and nothing else
// changes.
func TestObservedEvents(t *testing.T) {
	newA := func() *Anthropic {
		return NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1000, 1_000_000), Latency: zeroLatency}})
	}
	none := func(*prompt.Request) {}
	start := func(a *Anthropic) *convo {
		c := newConvo(t, 2000).add(prompt.RoleUser, 500)
		send(t, a, t0, observedReq(c, none)) // entries at 2000 and 2500
		return c
	}
	t.Run("re-send served from the entry at the limit", func(t *testing.T) {
		a := newA()
		c := start(a).blocks(25, 10) // the 2,500 entry is out of the tail's lookback
		u := send(t, a, t0.Add(time.Minute), observedReq(c, func(r *prompt.Request) { r.ReadLimit, r.Limited = 1, true }))
		if u.CacheRead != 2500 {
			t.Errorf("limited at block 1: read %d, want the 2,500 entry there", u.CacheRead)
		}
		b := newA()
		c = start(b).blocks(25, 10)
		if u := send(t, b, t0.Add(time.Minute), observedReq(c, none)); u.CacheRead != 2000 {
			t.Errorf("unlimited: read %d, want the system entry only (lookback)", u.CacheRead)
		}
	})
	t.Run("re-send read ending inside a block", func(t *testing.T) {
		// The bill read 1,500 tokens of the 2,000-token system block
		// (an inferred floor the request had boundaries in): that much
		// is read, and the rest of the block is written again.
		a := newA()
		c := start(a).add(prompt.RoleUser, 50)
		u := send(t, a, t0.Add(time.Minute), observedReq(c, func(r *prompt.Request) {
			r.ReadLimit, r.ReadTokens, r.Limited = -1, 1500, true
			r.ReadInside = r.InsideFloor()
		}))
		if u.CacheRead != 1500 || u.CacheWrite5m != 2550-1500 {
			t.Errorf("read ending inside the system block: read %d, wrote %d; want 1,500 and 1,050", u.CacheRead, u.CacheWrite5m)
		}
		// A read ending on the limit's boundary is served there, as before.
		b := newA()
		c = start(b).add(prompt.RoleUser, 50)
		if u := send(t, b, t0.Add(time.Minute), observedReq(c, func(r *prompt.Request) {
			r.ReadLimit, r.ReadTokens, r.Limited = 0, 2000, true
			r.ReadInside = r.InsideFloor()
		})); u.CacheRead != 2000 {
			t.Errorf("read ending at block 0: read %d, want 2,000", u.CacheRead)
		}
	})
	t.Run("kept alive past the TTL", func(t *testing.T) {
		a := newA()
		c := start(a).add(prompt.RoleUser, 50)
		u := send(t, a, t0.Add(10*time.Minute), observedReq(c, func(r *prompt.Request) { r.KeepAlive, r.KeptAlive = 1, true }))
		if u.CacheRead != 2500 {
			t.Errorf("kept alive through block 1: read %d, want 2,500", u.CacheRead)
		}
		// The revived system entry was refreshed with the read: a re-send
		// to it a minute later is served.
		c.add(prompt.RoleUser, 50)
		if u := send(t, a, t0.Add(11*time.Minute), observedReq(c, func(r *prompt.Request) { r.ReadLimit, r.Limited = 0, true })); u.CacheRead != 2000 {
			t.Errorf("re-send to the system block after a kept-alive read: read %d, want 2,000", u.CacheRead)
		}
		b := newA()
		c = start(b).add(prompt.RoleUser, 50)
		if u := send(t, b, t0.Add(10*time.Minute), observedReq(c, none)); u.CacheRead != 0 {
			t.Errorf("not kept alive: read %d after 10 idle minutes on 5m, want 0", u.CacheRead)
		}
		// The bill read 1,200 tokens of the 2,000-token system block after
		// the gap (the account kept only its shared part warm): that much
		// is read, the rest of the block and the messages written.
		d := newA()
		c = start(d).add(prompt.RoleUser, 50)
		u = send(t, d, t0.Add(10*time.Minute), observedReq(c, func(r *prompt.Request) {
			r.KeepAlive, r.ReadTokens, r.KeptAlive = 0, 1200, true
			r.ReadInside = r.InsideFloor()
		}))
		if u.CacheRead != 1200 || u.CacheWrite5m != 2550-1200 {
			t.Errorf("kept alive inside the system block: read %d, wrote %d; want 1,200 and 1,350", u.CacheRead, u.CacheWrite5m)
		}
	})
	t.Run("openai honours the limit", func(t *testing.T) {
		o := newTestOpenAI(t, OpenAIOptions{})
		c := newConvo(t, 2000).add(prompt.RoleUser, 500)
		c.model = "gpt"
		send(t, o, t0, c.req(prompt.NoCache))
		c.add(prompt.RoleUser, 100)
		r := c.b.Build(c.model, &c.v, 7)
		r.ReadLimit, r.Limited = 0, true
		r.Freeze()
		if u := send(t, o, t0.Add(time.Minute), r); u.CacheRead != 1920 {
			t.Errorf("limited to the system block: cached %d, want 1,920 (2,000 in 128-token steps)", u.CacheRead)
		}
		c.add(prompt.RoleUser, 100)
		if u := send(t, o, t0.Add(2*time.Minute), c.req(prompt.NoCache)); u.CacheRead != 2560 {
			t.Errorf("unlimited: cached %d, want 2,560 (the 2,600-token prefix sent before, in 128-token steps)", u.CacheRead)
		}
		// A read that ended inside the system block (a routing miss
		// reading part of the opaque floor): that many tokens.
		c.add(prompt.RoleUser, 100)
		r = c.b.Build(c.model, &c.v, 7)
		r.ReadLimit, r.ReadTokens, r.Limited = -1, 1500, true
		r.Freeze()
		if u := send(t, o, t0.Add(3*time.Minute), r); u.CacheRead != 1408 {
			t.Errorf("read ending inside the system block: cached %d, want 1,408 (1,500 in 128-token steps)", u.CacheRead)
		}
	})
	t.Run("openai honours a read past its idle lifetime", func(t *testing.T) {
		o := newTestOpenAI(t, OpenAIOptions{})
		c := newConvo(t, 2000).add(prompt.RoleUser, 500)
		c.model = "gpt"
		send(t, o, t0, c.req(prompt.NoCache))
		c.add(prompt.RoleUser, 100)
		if u := send(t, o, t0.Add(time.Hour), c.req(prompt.NoCache)); u.CacheRead != 0 {
			t.Fatalf("an hour idle: cached %d, want 0", u.CacheRead)
		}
		c.add(prompt.RoleUser, 100)
		r := c.b.Build(c.model, &c.v, 7)
		r.KeepAlive, r.KeptAlive = 1, true // the log read through the first user message
		r.Freeze()
		resp, err := o.Send(t0.Add(3*time.Hour), r)
		if err != nil || resp.Usage.CacheRead != 2432 || !resp.KeptAlive {
			t.Errorf("kept alive: %+v %v, want 2,432 cached (2,500 in 128-token steps), kept alive", resp, err)
		}
	})
}

// A written entry caches the prefixes at its block boundaries too: a
// request that diverges inside it reads up to the last common boundary
// when a breakpoint's lookback reaches it, though no request marked it.
// package hindsight's store keeps breakpoints only (SubPrefixes).
func TestSubPrefixRead(t *testing.T) {
	a := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1000, 1_000_000), Latency: zeroLatency}})
	c := newConvo(t, 2000).add(prompt.RoleUser, 500).add(prompt.RoleAssistant, 300).add(prompt.RoleUser, 400)
	send(t, a, t0, c.req(prompt.TTL5m, 0, -1)) // entries at 2000 and 3200 (and the boundaries between)
	// Rewind: the last message is replaced by another.
	c.v.Messages = c.v.Messages[:2]
	c.add(prompt.RoleUser, 450)
	if u := send(t, a, t0.Add(time.Minute), c.req(prompt.TTL5m, 0, -1)); u.CacheRead != 2800 {
		t.Errorf("after replacing the last message: read %d, want 2,800 (system, user, assistant)", u.CacheRead)
	}
	if _, ok := any(entryMap{}).(SubPrefixes); !ok {
		t.Error("the provider's store keeps sub-prefixes")
	}
}

// A Router bills each request on its model's provider, each with its own
// cache: a Claude request writes (Anthropic), a GPT request does not
// (OpenAI's automatic cache).
func TestRouter(t *testing.T) {
	card := testCard(1000, 1_000_000)
	made := map[string]int{}
	r := &Router{
		For: func(model string) string {
			p, err := card.Lookup(model)
			if err != nil {
				t.Fatal(err)
			}
			return p.Provider
		},
		New: func(name string) (Provider, error) {
			made[name]++
			return ByName(name, Options{Common: Common{Prices: card, Latency: zeroLatency}, OpenAI: OpenAIOptions{Rand: rand.New(rand.NewPCG(1, 2))}})
		},
	}
	claude := newConvo(t, 2000).add(prompt.RoleUser, 500)
	if u := send(t, r, t0, claude.req(prompt.TTL5m, -1)); u.CacheWrite5m != 2500 {
		t.Errorf("claude request: %+v, want a 2,500-token write", u)
	}
	gpt := newConvo(t, 2000).add(prompt.RoleUser, 500)
	gpt.model = "gpt"
	send(t, r, t0, gpt.req(prompt.NoCache))
	if u := send(t, r, t0.Add(time.Minute), gpt.add(prompt.RoleUser, 10).req(prompt.NoCache)); u.Writes() != 0 || u.CacheRead != 2432 {
		t.Errorf("gpt request: %+v, want no writes and 2,432 cached (OpenAI's 128-token steps)", u)
	}
	if made["anthropic"] != 1 || made["openai"] != 1 {
		t.Errorf("providers made %v, want one of each", made)
	}
}

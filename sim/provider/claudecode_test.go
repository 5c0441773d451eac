package provider

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// TestClaudeCodePattern replays the shape of the recorded 4d5611e5 session
// (a 21478-token floor of which 11442 is shared with another session; tail
// framing of 1-3 tokens) through the claude-code planner and checks the
// billing pattern the logs show: the first call reads the shared part, each
// later call reads the previous prompt less its tail, and after the
// messages are replaced (compaction) the floor is read.
func TestClaudeCodePattern(t *testing.T) {
	p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(4096, 1000000), Latency: zeroLatency}})
	plan, err := cacheplan.ByName("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	floor := func(c *convo) {
		c.v.Tools = []traces.Block{{Kind: traces.ToolSchema, Name: "tools", Tokens: 9000}}
		c.v.System = []traces.Block{{Kind: traces.System, Name: "static", Tokens: 2442}, {Kind: traces.System, Name: "session", Tokens: 10036}}
	}
	// Another session with the same tools and static system wrote 11442.
	other := newConvo(t, 0)
	floor(other)
	other.v.System[1].Name = "other session"
	other.add(prompt.RoleUser, 100)
	r := other.b.Build("m", &other.v, 7)
	plan.Plan(r, prompt.TTL5m)
	send(t, p, t0, r)

	c := newConvo(t, 0)
	c.b.Wire.Tail = 3
	floor(c)
	call := func(at time.Duration) traces.Usage {
		r := c.b.Build("m", &c.v, 7)
		plan.Plan(r, prompt.TTL5m)
		r.Freeze()
		return send(t, p, t0.Add(at), r)
	}
	c.add(prompt.RoleUser, 4969)
	if u, want := call(time.Minute), usage(3, 15005, 0, 11442, 7); u != want {
		t.Errorf("first call %+v, want %+v", u, want)
	}
	prev := int64(26450)
	for i := range 5 {
		c.add(prompt.RoleAssistant, 40).add(prompt.RoleTool, 300)
		u := call(time.Minute + time.Duration(i+1)*10*time.Second)
		if u.CacheRead != prev-3 || u.Input != 3 {
			t.Errorf("call %d: %+v, want read %d and input 3", i+2, u, prev-3)
		}
		prev = u.Prompt()
	}
	// Compaction: every message is replaced; the floor entry serves.
	c.v.Messages = nil
	c.add(prompt.RoleUser, 14600)
	if u := call(3 * time.Minute); u.CacheRead != 21478 || u.CacheWrite5m != 14600 {
		t.Errorf("after compaction %+v, want read 21478 and write 14600", u)
	}
}

// TestAnthropicInvariants sends random conversations with random
// breakpoints: every accepted call bills non-negative counters that sum to
// the prompt, and never reads more than was written before.
func TestAnthropicInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		p := newTestAnthropic(1024)
		c := newConvo(t, 1+rng.IntN(3000))
		now := t0
		written := int64(0)
		for call := range 30 {
			for range rng.IntN(25) {
				c.add(prompt.Role(1+rng.IntN(3)), 1+rng.IntN(400))
			}
			if len(c.v.Messages) > 4 && rng.IntN(8) == 0 {
				c.v.Messages = c.v.Messages[:rng.IntN(len(c.v.Messages))]
			}
			r := c.b.Build("m", &c.v, 5)
			for range rng.IntN(6) {
				r.Mark(rng.IntN(len(r.Blocks)), prompt.TTL(1+rng.IntN(2)))
			}
			now = now.Add(time.Duration(rng.IntN(600)) * time.Second)
			resp, err := p.Send(now, r)
			if err != nil {
				if _, ok := err.(*APIError); !ok {
					t.Fatalf("trial %d call %d: %v is not an APIError", trial, call, err)
				}
				continue
			}
			u := resp.Usage
			if u.Input < 0 || u.CacheWrite5m < 0 || u.CacheWrite1h < 0 || u.CacheRead < 0 || u.Prompt() != int64(r.Total) {
				t.Fatalf("trial %d call %d: usage %+v for a %d-token prompt", trial, call, u, r.Total)
			}
			// Every cache entry is a prefix some earlier call wrote, on top
			// of entries written before it.
			if u.CacheRead > written {
				t.Fatalf("trial %d call %d: read %d with only %d ever written", trial, call, u.CacheRead, written)
			}
			written += u.Writes()
		}
	}
}

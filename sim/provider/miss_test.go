package provider

import (
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// Each call says why it did not read what its conversation's previous call
// cached, and how much it did not read.
func TestMissAttribution(t *testing.T) {
	newA := func() *Anthropic {
		return NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1000, 1_000_000), Latency: zeroLatency}})
	}
	first := func(a *Anthropic, c *convo) {
		r := c.req(prompt.TTL5m, -1)
		r.Key = "s"
		if _, err := a.Send(t0, r); err != nil {
			t.Fatal(err)
		}
	}
	second := func(a *Anthropic, c *convo, at time.Time, marks ...int) Miss {
		r := c.req(prompt.TTL5m, marks...)
		r.Key = "s"
		resp, err := a.Send(at, r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Miss
	}
	// prompt after the first call: 2000 system + 500 user + 1 tail = 2501,
	// cached through the user message: 2500.
	start := func() *convo { return newConvo(t, 2000).add(prompt.RoleUser, 500) }

	t.Run("growth", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		if m := second(a, c.add(prompt.RoleAssistant, 50), t0.Add(time.Minute), -1); m != (Miss{}) {
			t.Errorf("normal growth: %+v, want no miss", m)
		}
	})
	t.Run("expired", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		if m := second(a, c.add(prompt.RoleAssistant, 50), t0.Add(6*time.Minute), -1); m != (Miss{Reason: MissExpired, Tokens: 2500}) {
			t.Errorf("after 6 idle minutes on 5m: %+v", m)
		}
	})
	t.Run("rewrite", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		c.v.Messages[0] = prompt.NewMessage(prompt.RoleUser, []traces.Block{{Kind: traces.Text, Name: "edited", Tokens: 300}}, -1, prompt.Edited)
		// Only the message was marked; the system prompt's boundary
		// inside its entry still serves (a sub-prefix), the rest is lost.
		if m := second(a, c, t0.Add(time.Minute), -1); m != (Miss{Reason: MissRewrite, Tokens: 500}) {
			t.Errorf("after an edit of the first message: %+v", m)
		}
	})
	t.Run("lookback", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		c.blocks(21, 10) // a turn of 21 blocks: the last breakpoint is out of reach
		if m := second(a, c, t0.Add(time.Minute), -1); m != (Miss{Reason: MissLookback, Tokens: 2500}) {
			t.Errorf("after 21 new blocks: %+v", m)
		}
	})
	t.Run("model", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		c.model = "m2"
		if m := second(a, c.add(prompt.RoleAssistant, 50), t0.Add(time.Minute), -1); m != (Miss{Reason: MissModel, Tokens: 2500}) {
			t.Errorf("after a model switch: %+v", m)
		}
	})
	t.Run("another conversation", func(t *testing.T) {
		a, c := newA(), start()
		first(a, c)
		other := newConvo(t, 2000).add(prompt.RoleUser, 700)
		r := other.req(prompt.TTL5m, -1)
		r.Key = "other"
		resp, err := a.Send(t0.Add(time.Minute), r)
		if err != nil || resp.Miss != (Miss{}) {
			t.Errorf("another session's first call: %+v, %v; want no miss charged to it", resp.Miss, err)
		}
		if m := second(a, c.add(prompt.RoleAssistant, 50), t0.Add(2*time.Minute), -1); m != (Miss{}) {
			t.Errorf("the first session's next call after another's: %+v, want none", m)
		}
	})
}

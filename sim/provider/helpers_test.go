package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

// Test requests are sized exactly: a block's tokens are its Tokens field
// (opaque blocks), so the numbers in the tables are the prompt positions.
func count(b *traces.Block, _ uint64) int { return len(b.Text) + len(b.Input) + b.Tokens }

var t0 = time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)

func testCard(minCacheable, window int) *pricing.Card {
	return pricing.NewCard(
		pricing.Price{Model: "m", Provider: "anthropic", Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3, Window: window, MinCacheable: minCacheable},
		pricing.Price{Model: "m2", Provider: "anthropic", Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3, Window: window, MinCacheable: minCacheable},
		pricing.Price{Model: "gpt", Provider: "openai", Input: 2, Output: 8, CacheWrite5m: 2, CacheRead: 0.5, Window: window, MinCacheable: 1024},
	)
}

// zeroLatency makes TTFT 0, so entries are readable at once unless a test
// wants otherwise.
var zeroLatency = &Latency{}

// A convo grows a view message by message and renders it.
type convo struct {
	t     *testing.T
	b     *prompt.Builder
	v     prompt.View
	model string
	n     int
}

// newConvo starts a view whose floor is one system block of sys tokens.
func newConvo(t *testing.T, sys int) *convo {
	c := &convo{t: t, b: prompt.NewBuilder(count, prompt.Wire{Tail: 1}), model: "m"}
	if sys > 0 {
		c.v.System = []traces.Block{{Kind: traces.System, Name: "sys", Tokens: sys}}
	}
	return c
}

// add appends a message of the given role with one block per size.
func (c *convo) add(role prompt.Role, sizes ...int) *convo {
	var bs []traces.Block
	for _, s := range sizes {
		c.n++
		k := traces.Text
		if role == prompt.RoleTool {
			k = traces.ToolResultBlock
		}
		bs = append(bs, traces.Block{Kind: k, Name: fmt.Sprintf("b%d", c.n), ID: fmt.Sprintf("t%d", c.n), Tokens: s})
	}
	c.v.Messages = append(c.v.Messages, prompt.NewMessage(role, bs, -1, prompt.Plain))
	return c
}

// blocks appends n user messages of one block of size s each.
func (c *convo) blocks(n, s int) *convo {
	for range n {
		c.add(prompt.RoleUser, s)
	}
	return c
}

// req renders the view with breakpoints at the given blocks (negative
// counts from the end: -1 is the last block).
func (c *convo) req(ttl prompt.TTL, at ...int) *prompt.Request {
	r := c.b.Build(c.model, &c.v, 7)
	for _, i := range at {
		if i < 0 {
			i += len(r.Blocks)
		}
		r.Mark(i, ttl)
	}
	r.Freeze()
	return r
}

func usage(in, w5, w1h, read, out int64) traces.Usage {
	return traces.Usage{Input: in, CacheWrite5m: w5, CacheWrite1h: w1h, CacheRead: read, Output: out}
}

func send(t *testing.T, p Provider, now time.Time, r *prompt.Request) traces.Usage {
	t.Helper()
	resp, err := p.Send(now, r)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := resp.Usage.Prompt(); got != int64(r.Total) && resp.Wire.ClearedInputTokens == 0 {
		t.Errorf("usage %+v sums to %d, want the prompt %d (additive)", resp.Usage, got, r.Total)
	}
	return resp.Usage
}

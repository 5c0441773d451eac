package provider

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
)

func newTestGemini(t *testing.T, minCacheable int) *Gemini {
	g, err := NewGemini(GeminiOptions{Common: Common{Prices: testCard(minCacheable, 1_048_576), Latency: zeroLatency}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGeminiRules walks one conversation per caching rule of the Gemini
// API (ai.google.dev/gemini-api/docs/caching; reference/providers.md §3).
func TestGeminiRules(t *testing.T) {
	type call struct {
		at   time.Duration
		grow func(c *convo)
		bps  []int
		ttl  prompt.TTL
		want [5]int64 // input, 5m write, 1h write, read, output
	}
	tests := []struct {
		name       string
		min, floor int
		calls      []call
	}{
		{"implicit: a repeated prefix is read, writing is free", 1024, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.add(prompt.RoleAssistant, 100).add(prompt.RoleUser, 50) }, nil, prompt.TTL5m, [5]int64{151, 0, 0, 2500, 7}},
		}},
		{"implicit: no guarantee, an idle prefix is gone", 1024, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
			{6 * time.Minute, nil, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
		}},
		{"implicit: below the minimum nothing is read", 4096, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
			{time.Minute, nil, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
		}},
		{"explicit: created with its TTL, read until it expires, then created again", 1024, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, []int{0}, prompt.TTL1h, [5]int64{501, 0, 2000, 0, 7}},
			{30 * time.Minute, func(c *convo) { c.add(prompt.RoleUser, 40) }, []int{0}, prompt.TTL1h, [5]int64{541, 0, 0, 2000, 7}},
			{61 * time.Minute, nil, []int{0}, prompt.TTL1h, [5]int64{541, 0, 2000, 0, 7}},
		}},
		{"explicit 5m: use does not extend it", 1024, 2000, []call{
			{0, nil, []int{0}, prompt.TTL5m, [5]int64{1, 2000, 0, 0, 7}},
			{4 * time.Minute, nil, []int{0}, prompt.TTL5m, [5]int64{1, 0, 0, 2000, 7}},
			{6 * time.Minute, nil, []int{0}, prompt.TTL5m, [5]int64{1, 2000, 0, 0, 7}},
		}},
		{"explicit below the minimum is not created", 4096, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, []int{0}, prompt.TTL1h, [5]int64{2501, 0, 0, 0, 7}},
		}},
		{"creating a cache under a longer implicit hit reads the rest", 1024, 2000, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, nil, prompt.TTL5m, [5]int64{2501, 0, 0, 0, 7}},
			{time.Minute, nil, []int{0}, prompt.TTL1h, [5]int64{1, 0, 2000, 500, 7}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGemini(t, tt.min)
			c := newConvo(t, tt.floor)
			for i, cl := range tt.calls {
				if cl.grow != nil {
					cl.grow(c)
				}
				got := send(t, g, t0.Add(cl.at), c.req(cl.ttl, cl.bps...))
				if want := usage(cl.want[0], cl.want[1], cl.want[2], cl.want[3], cl.want[4]); got != want {
					t.Errorf("call %d: usage %+v, want %+v", i, got, want)
				}
			}
		})
	}
}

// The Gemini rows of the built-in card carry current prices with their
// source, and fold storage into the write rates: a write of tier T costs
// input + cached + storage × T per token (the creation call, the read, and
// T hours of storage).
func TestGeminiRates(t *testing.T) {
	card := pricing.Default()
	for _, tt := range []struct {
		model                        string
		input, read, storage, output float64
	}{
		{"gemini-2.5-pro", 1.25, 0.125, 4.50, 10},
		{"gemini-2.5-flash", 0.30, 0.03, 1.00, 2.50},
	} {
		p, err := card.Lookup(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if p.Provider != "gemini" || p.Source == "" || !slices.Contains(Names(), p.Provider) {
			t.Errorf("%s: provider %q, source %q: want gemini, a registered provider, with a source", tt.model, p.Provider, p.Source)
		}
		if p.Input != tt.input || p.CacheRead != tt.read || p.StoragePerHour != tt.storage || p.Output != tt.output {
			t.Errorf("%s: %+v", tt.model, p)
		}
		if w := tt.input + tt.read + tt.storage; math.Abs(p.CacheWrite1h-w) > 1e-9 {
			t.Errorf("%s: 1h write %v, want %v", tt.model, p.CacheWrite1h, w)
		}
		if w := tt.input + tt.read + tt.storage/12; math.Abs(p.CacheWrite5m-w) > 1e-9 {
			t.Errorf("%s: 5m write %v, want %v", tt.model, p.CacheWrite5m, w)
		}
	}
	if _, err := ByName("gemini", Options{}); err != nil {
		t.Errorf("ByName(gemini): %v", err)
	}
	if _, err := NewGemini(GeminiOptions{ImplicitIdle: -time.Second}); err == nil {
		t.Error("a negative implicit idle was accepted")
	}
}

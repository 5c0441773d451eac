package pricing

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func beAnthropic() Price {
	return Price{Model: "m", Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5}
}

func beNear(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBreakevens(t *testing.T) {
	bs, err := Breakevens(beAnthropic())
	require.NoError(t, err)
	require.Len(t, bs, 2)
	for i, want := range []Breakeven{
		{TTL: "5m", WriteMultiple: 1.25, ReadMultiple: 0.1, Uses: 1.15 / 0.9, Reuses: 0.25 / 0.9, MinUses: 2, Pays: true},
		{TTL: "1h", WriteMultiple: 2, ReadMultiple: 0.1, Uses: 1.9 / 0.9, Reuses: 1 / 0.9, MinUses: 3, Pays: true},
	} {
		got := bs[i]
		if got.TTL != want.TTL || !beNear(got.WriteMultiple, want.WriteMultiple) || !beNear(got.ReadMultiple, want.ReadMultiple) ||
			!beNear(got.Uses, want.Uses) || !beNear(got.Reuses, want.Reuses) || got.MinUses != want.MinUses || got.Pays != want.Pays {
			t.Errorf("Breakevens[%d] = %+v, want %+v", i, got, want)
		}
	}
	// The figures, to 2 decimals.
	if got := math.Round(bs[0].Uses*100) / 100; got != 1.28 {
		t.Errorf("5m uses = %.2f, want 1.28", got)
	}
	if got := math.Round(bs[1].Uses*100) / 100; got != 2.11 {
		t.Errorf("1h uses = %.2f, want 2.11", got)
	}
	// The closed form is where the cumulative costs cross.
	for _, b := range bs {
		n := b.MinUses
		if c := CumulativeCost(n, b.WriteMultiple, b.ReadMultiple); c >= float64(n) {
			t.Errorf("%s: %d uses cost %v cached, not below %d uncached", b.TTL, n, c, n)
		}
		if c := CumulativeCost(n-1, b.WriteMultiple, b.ReadMultiple); c < float64(n-1) {
			t.Errorf("%s: %d uses already pay (%v < %d)", b.TTL, n-1, c, n-1)
		}
	}
}

func TestBreakevensEdges(t *testing.T) {
	// Free writes (OpenAI-style, write = input): the first reuse pays.
	bs, err := Breakevens(Price{Model: "o", Input: 2, CacheWrite5m: 2, CacheRead: 0.5})
	require.NoError(t, err)
	if len(bs) != 1 || !beNear(bs[0].Uses, 1) || bs[0].MinUses != 2 {
		t.Errorf("free writes: %+v", bs)
	}
	// No read discount: never pays.
	bs, err = Breakevens(Price{Model: "x", Input: 1, CacheWrite5m: 1.25, CacheRead: 1})
	require.NoError(t, err)
	if bs[0].Pays || bs[0].Uses != 0 {
		t.Errorf("no discount: %+v", bs[0])
	}
	if _, err := Breakevens(Price{Model: "z"}); err == nil {
		t.Errorf("Breakevens with no input rate succeeded")
	}
}

func TestMixOf(t *testing.T) {
	m := MixOf([]time.Duration{time.Minute, 5 * time.Minute, 6 * time.Minute, time.Hour, 61 * time.Minute})
	if want := (GapMix{Short: 0.4, Mid: 0.4, Long: 0.2, Gaps: 5}); m != want {
		t.Errorf("MixOf = %+v, want %+v", m, want)
	}
	if m := MixOf(nil); m != (GapMix{}) {
		t.Errorf("MixOf(nil) = %+v", m)
	}
}

func TestMidBreakeven(t *testing.T) {
	p := beAnthropic()
	// (0 + 0.05)·(2 − 1.25) ÷ (1.25 − 0.1)
	mid, ok := MidBreakeven(p, 0, 0.05)
	if !ok || !beNear(mid, 0.05*0.75/1.15) {
		t.Errorf("MidBreakeven = %v, %v", mid, ok)
	}
	// At the break-even mix the expected per-call costs are equal.
	long, growth := 0.1, 0.05
	mid, _ = MidBreakeven(p, long, growth)
	cost := func(ttl time.Duration) float64 {
		return (1-mid-long)*CallCost(p, ttl, time.Minute, growth) + mid*CallCost(p, ttl, 30*time.Minute, growth) +
			long*CallCost(p, ttl, 2*time.Hour, growth)
	}
	if c5, c1 := cost(TTL5m), cost(TTL1h); !beNear(c5, c1) {
		t.Errorf("at mid=%v: 5m %v, 1h %v per call", mid, c5, c1)
	}
	if _, ok := MidBreakeven(Price{Model: "o", Input: 1, CacheWrite5m: 1, CacheRead: 0.5}, 0, 0); ok {
		t.Errorf("MidBreakeven without a 1h tier is ok")
	}
}

func TestReplayTTL(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := []CallPoint{
		{t0, 1000},
		{t0.Add(2 * time.Minute), 1200},
		{t0.Add(20 * time.Minute), 1500},
		{t0.Add(140 * time.Minute), 1600},
	}
	v, err := ReplayTTL(beAnthropic(), calls)
	require.NoError(t, err)
	// 5m: write 1000; read 1000 + write 200; write 1500; write 1600.
	// 1h: write 1000; read 1000 + write 200; read 1200 + write 300; write 1600.
	want5 := (1000*6.25 + 1000*0.5 + 200*6.25 + 1500*6.25 + 1600*6.25) / 1e6
	want1 := (1000*10 + 1000*0.5 + 200*10 + 1200*0.5 + 300*10 + 1600*10) / 1e6
	if !beNear(v.Cost5m, want5) || !beNear(v.Cost1h, want1) || !beNear(v.Savings1h, want5-want1) {
		t.Errorf("ReplayTTL costs = %v, %v, %v; want %v, %v", v.Cost5m, v.Cost1h, v.Savings1h, want5, want1)
	}
	// Growth: (200 + 300 + 100) ÷ (1000 + 1200 + 1500).
	if !beNear(v.Growth, 600.0/3700) {
		t.Errorf("Growth = %v, want %v", v.Growth, 600.0/3700)
	}
	if v.Rewrites5m != 2 || v.Rewrites1h != 1 || v.Calls != 4 || v.Mix.Gaps != 3 {
		t.Errorf("ReplayTTL = %+v", v)
	}
	if _, err := ReplayTTL(Price{Model: "o", Input: 1, CacheWrite5m: 1}, calls); err == nil {
		t.Errorf("ReplayTTL without a 1h tier succeeded")
	}
}

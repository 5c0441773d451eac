package hindsight

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// KeyOf names the tape, the options and the parts: equal ones give equal
// keys, and a change to any field of a call, a time's zone, a part, the
// beam, a model's rates or the latency gives another.
func TestKeyOf(t *testing.T) {
	opts := testOpts()
	key := func(calls []Call, o Options, parts ...string) Key {
		t.Helper()
		k, err := KeyOf(calls, o, parts...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(memoTape(), opts, "separate", "a", "b")
	if key(memoTape(), opts, "separate", "a", "b") != base {
		t.Fatal("equal tapes, different keys")
	}
	const at = 5
	mutate := callMutations(t)
	two := testOpts()
	p, _ := two.Prices.Lookup("m")
	p.Model = "m2"
	two.Prices.Set(p)
	for name, f := range mutate {
		calls := memoTape()
		f(&calls[at])
		if key(calls, two, "separate", "a", "b") == key(memoTape(), two, "separate", "a", "b") {
			t.Errorf("%s: same key", name)
		}
	}
	calls := memoTape()
	calls[at].Time = calls[at].Time.In(time.FixedZone("X", 3600))
	if key(calls, opts, "separate", "a", "b") == base {
		t.Error("a time in another zone: same key")
	}
	if key(memoTape(), opts, "separate", "a", "c") == base || key(memoTape(), opts) == base {
		t.Error("other parts: same key")
	}
	o := testOpts()
	o.Beam = 3
	if key(memoTape(), o, "separate", "a", "b") == base {
		t.Error("another beam: same key")
	}
	o = testOpts()
	o.MaxLayerEntries = 100
	if key(memoTape(), o, "separate", "a", "b") == base {
		t.Error("another cap on the search's states: same key")
	}
	o = testOpts()
	p, _ = o.Prices.Lookup("m")
	p.CacheRead = 0.31
	o.Prices.Set(p)
	if key(memoTape(), o, "separate", "a", "b") == base {
		t.Error("another read rate: same key")
	}
	o = testOpts()
	o.Latency = &provider.Latency{Floor: 2 * time.Second, PrefillRate: 1000, CachedRate: 50000, DecodeRate: 100}
	if key(memoTape(), o, "separate", "a", "b") == base {
		t.Error("another latency: same key")
	}
	o = testOpts()
	o.Prices = pricing.NewCard()
	if _, err := KeyOf(memoTape(), o); err == nil {
		t.Error("a model the card cannot price: no error")
	}
}

// A Result's exported fields survive MarshalBinary and UnmarshalBinary
// exactly (every float to the bit); the schedules tried are not kept.
func TestResultRoundTrip(t *testing.T) {
	r, err := Solve(context.Background(), memoTape(), testOpts())
	if err != nil {
		t.Fatal(err)
	}
	r.Capped = 3 // a search cut to bound its memory says so after the store too
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Result
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want := *r
	want.cands, want.peak, want.skipped = nil, 0, 0
	if !reflect.DeepEqual(&got, &want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if len(got.Schedule) == 0 || got.CostUSD <= 0 {
		t.Fatalf("an empty result: %+v", got)
	}
	// Every cut, and a byte more, is an error, never a panic or a part.
	for i := range len(b) {
		if err := new(Result).UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("cut at %d of %d decoded", i, len(b))
		}
	}
	if err := new(Result).UnmarshalBinary(append(b, 0)); err == nil {
		t.Error("a trailing byte decoded")
	}
	// Nil and empty lists read back as they were.
	for _, r := range []*Result{{}, {Schedule: [][]prompt.Breakpoint{}, Usage: []traces.Usage{}, Cost: []float64{}, PolicyUsage: []traces.Usage{}, PolicyCost: []float64{}}} {
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Result
		if err := got.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&got, r) {
			t.Errorf("%+v read back as %+v (%v)", r, got, err)
		}
	}
	if _, err := (&Result{Schedule: make([][]prompt.Breakpoint, 2)}).MarshalBinary(); err == nil {
		t.Error("per-call lists of different lengths encoded")
	}
}

// FuzzResult: any bytes decode to a result or an error, without a panic,
// and what decodes encodes to bytes that decode to the same result.
func FuzzResult(f *testing.F) {
	r, err := Solve(context.Background(), memoTape(), testOpts())
	if err != nil {
		f.Fatal(err)
	}
	b, err := r.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{resultVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Result
		if r.UnmarshalBinary(b) != nil {
			return
		}
		again, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded result does not encode: %v", err)
		}
		var r2 Result
		if err := r2.UnmarshalBinary(again); err != nil {
			t.Fatalf("a re-encoded result does not decode: %v", err)
		}
		// Floats by their bits: a NaN is a NaN.
		if !reflect.DeepEqual(sameBits(r), sameBits(r2)) {
			t.Fatalf("round trip changed the result:\n%+v\n%+v", r, r2)
		}
	})
}

// sameBits is r with every float as its bits, for a comparison that holds
// for NaNs too.
func sameBits(r Result) any {
	bits := func(fs []float64) []uint64 {
		if fs == nil {
			return nil
		}
		out := make([]uint64, len(fs))
		for i, f := range fs {
			out[i] = math.Float64bits(f)
		}
		return out
	}
	return []any{math.Float64bits(r.CostUSD), math.Float64bits(r.BoundUSD), math.Float64bits(r.PolicyUSD), math.Float64bits(r.SearchUSD),
		r.Exact, r.Source, r.Schedule, r.Usage, bits(r.Cost), r.PolicyUsage, bits(r.PolicyCost)}
}

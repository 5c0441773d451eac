package hindsight

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// memoTape is a small two-conversation tape with a policy schedule, built
// afresh on each call (no storage shared with an earlier one).
func memoTape() []Call {
	s := randomSession(rand.New(rand.NewPCG(3, 4)), 12, 5)
	for i := range s.calls {
		c := &s.calls[i]
		if i%3 == 2 {
			c.Key = "sub"
		}
		c.Window = 200000
		c.Policy = []prompt.Breakpoint{{Block: len(c.Blocks) - 1, TTL: prompt.TTL5m}}
		if !c.Blocks[len(c.Blocks)-1].Cacheable {
			c.Policy = nil
		}
	}
	return s.calls
}

// TestMemo: a second tape equal to the first is not solved again and gets
// the same result, as its own copy; a tape differing in any one field of
// a call, or solved with other options, is solved.
func TestMemo(t *testing.T) {
	opts := testOpts()
	var m Memo
	first, err := m.Solve(context.Background(), memoTape(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Solve(context.Background(), memoTape(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("the memo's first solve differs from Solve's")
	}
	again, err := m.Solve(context.Background(), memoTape(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if m.solves != 1 {
		t.Fatalf("%d solves for two equal tapes, want 1", m.solves)
	}
	if again == first || !reflect.DeepEqual(again, want) {
		t.Fatalf("the second caller's result is not an equal copy (same pointer: %v)", again == first)
	}
	again.Source, again.Exact = "changed", !again.Exact // as Separate does
	if first.Source != want.Source || first.Exact != want.Exact {
		t.Errorf("changing one caller's result changed another's")
	}

	// One mutation per field of Call: each makes a different tape.
	const at = 5
	mutate := callMutations(t)
	solves := m.solves
	for name, f := range mutate {
		calls := memoTape()
		f(&calls[at])
		if sameTape(calls, memoTape()) {
			t.Errorf("%s: the mutation changed nothing", name)
			continue
		}
		if _, err := m.Solve(context.Background(), calls, opts); err != nil && name != "Model" {
			t.Errorf("%s: %v", name, err)
		}
		if solves++; m.solves != solves {
			t.Errorf("%s: a changed tape was not solved", name)
		}
	}
	// The same instant in another zone is another time.Time (as the
	// search compares entry times, so does the memo).
	calls := memoTape()
	calls[at].Time = calls[at].Time.In(time.FixedZone("X", 3600))
	if _, err := m.Solve(context.Background(), calls, opts); err != nil {
		t.Fatal(err)
	}
	if solves++; m.solves != solves {
		t.Errorf("a tape with a time in another zone was not solved")
	}
	o := opts
	o.Beam = 3
	if _, err := m.Solve(context.Background(), memoTape(), o); err != nil {
		t.Fatal(err)
	}
	if solves++; m.solves != solves {
		t.Errorf("a tape solved with another beam was not solved")
	}
	o = opts
	o.MaxLayerEntries = 100
	if _, err := m.Solve(context.Background(), memoTape(), o); err != nil {
		t.Fatal(err)
	}
	if solves++; m.solves != solves {
		t.Errorf("a tape solved with another cap on the search's states was not solved")
	}
}

// TestMemoConcurrent: callers asking for one tape at once solve it once
// and all get Solve's result.
func TestMemoConcurrent(t *testing.T) {
	opts := testOpts()
	want, err := Solve(context.Background(), memoTape(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var m Memo
	var wg sync.WaitGroup
	got := make([]*Result, 8)
	for i := range got {
		wg.Go(func() {
			r, err := m.Solve(context.Background(), memoTape(), opts)
			if err != nil {
				t.Error(err)
			}
			got[i] = r
		})
	}
	wg.Wait()
	if m.solves != 1 {
		t.Errorf("%d solves, want 1", m.solves)
	}
	for i, r := range got {
		if !reflect.DeepEqual(r, want) {
			t.Errorf("caller %d: result differs from Solve's", i)
		}
	}
}

// TestMemoCollision: a tape filed under the key of another is not taken
// for it.
func TestMemoCollision(t *testing.T) {
	opts := testOpts()
	a, b := memoTape(), memoTape()
	b[0].Output++
	ra, err := Solve(context.Background(), a, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	m := Memo{tapes: map[uint64][]*solved{tapeKey(b, opts): {{calls: a, opts: opts, done: done, res: ra}}}}
	rb, err := m.Solve(context.Background(), b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m.solves != 1 || reflect.DeepEqual(rb.PolicyCost, ra.PolicyCost) {
		t.Errorf("tape b got tape a's result (%d solves)", m.solves)
	}
}

// callMutations changes one field of a call each, one for every field of
// Call (checked, so a new field needs one here).
func callMutations(t *testing.T) map[string]func(c *Call) {
	t.Helper()
	mutate := map[string]func(c *Call){
		"Time":       func(c *Call) { c.Time = c.Time.Add(time.Nanosecond) },
		"Key":        func(c *Call) { c.Key += "x" },
		"Model":      func(c *Call) { c.Model = "m2" },
		"Blocks":     func(c *Call) { c.Blocks = slices.Clone(c.Blocks); c.Blocks[1].End++ },
		"Total":      func(c *Call) { c.Total++ },
		"Output":     func(c *Call) { c.Output++ },
		"ReadLimit":  func(c *Call) { c.ReadLimit = 1 },
		"Limited":    func(c *Call) { c.Limited = true },
		"KeepAlive":  func(c *Call) { c.KeepAlive++ },
		"KeptAlive":  func(c *Call) { c.KeptAlive = !c.KeptAlive },
		"ReadTokens": func(c *Call) { c.ReadTokens++ },
		"ReadInside": func(c *Call) { c.ReadInside = !c.ReadInside },
		"Window":     func(c *Call) { c.Window++ },
		"Started":    func(c *Call) { c.Started += time.Millisecond },
		"Policy":     func(c *Call) { c.Policy = []prompt.Breakpoint{{Block: len(c.Blocks) - 1, TTL: prompt.TTL1h}} },
		"Fixed":      func(c *Call) { c.Fixed = !c.Fixed },
	}
	for f := range reflect.TypeFor[Call]().Fields() {
		if mutate[f.Name] == nil {
			t.Errorf("Call.%s has no mutation here: do the memo and the key see it?", f.Name)
		}
	}
	return mutate
}

// A cancelled context stops a solve with its error, and the memo keeps
// nothing of it: the next caller solves the tape for real.
func TestMemoCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Solve(ctx, memoTape(), testOpts()); err != context.Canceled {
		t.Fatalf("Solve: %v, want context.Canceled", err)
	}
	var m Memo
	if _, err := m.Solve(ctx, memoTape(), testOpts()); err != context.Canceled {
		t.Fatalf("Memo.Solve: %v, want context.Canceled", err)
	}
	if m.Solves() != 0 {
		t.Errorf("%d solves kept after a cancelled one, want 0", m.Solves())
	}
	h, err := m.Solve(context.Background(), memoTape(), testOpts())
	if err != nil || h == nil || m.Solves() != 1 {
		t.Errorf("after the cancelled solve: %v, %d solves; want a result of one solve", err, m.Solves())
	}
}

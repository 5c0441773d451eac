package hindsight

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestCrewEach: every task runs exactly once, tasks that run each again
// (Solve's segments, then each segment's searches) included, with at most
// Workers at once, and a crew of one worker runs them in order on the
// caller's goroutine.
func TestCrewEach(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 8} {
		c := NewCrew(workers - 1)
		var ran [40][5]atomic.Int32
		var now, most atomic.Int32
		order := []int{}
		c.each(len(ran), func(i int) {
			if workers <= 1 {
				order = append(order, i)
			}
			c.each(len(ran[i]), func(j int) {
				n := now.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				ran[i][j].Add(1)
				now.Add(-1)
			})
		})
		for i := range ran {
			for j := range ran[i] {
				if n := ran[i][j].Load(); n != 1 {
					t.Fatalf("workers %d: task %d.%d ran %d times", workers, i, j, n)
				}
			}
		}
		if m := int(most.Load()); m > max(workers, 1) {
			t.Errorf("workers %d: %d tasks at once", workers, m)
		}
		for k, i := range order {
			if i != k {
				t.Fatalf("workers %d: one worker ran task %d %dth", workers, i, k)
			}
		}
	}
}

// TestKeyIndex: the states' key index finds what a map finds, through
// resets (a layer per call) and growth, key 0 (the empty cache's) and
// colliding slots included.
func TestKeyIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x keyIndex
	for round := range 50 {
		x.reset()
		want := map[uint64]int32{}
		n := rng.IntN(1 << rng.IntN(12))
		for range n {
			k := rng.Uint64() % 3000 // repeats
			if round%2 == 0 {
				k <<= 50 // keys equal in their low bits
			}
			v := rng.Int32()
			x.set(k, v)
			want[k] = v
		}
		for k := range uint64(3000) {
			if round%2 == 0 {
				k <<= 50
			}
			v, ok := x.get(k)
			w, wok := want[k]
			if ok != wok || ok && v != w {
				t.Fatalf("round %d: key %d: got %d %v, want %d %v", round, k, v, ok, w, wok)
			}
		}
	}
}

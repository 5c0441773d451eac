package hindsight

import (
	"sync"
	"sync/atomic"
)

// A Crew is goroutines that solves may hand their independent pieces to
// (Options.Crew): a tape's segments and, in a segment, the joint search
// and each conversation's own. A piece goes to a helper when one is free,
// else runs on the goroutine that reached it. Every piece is a pure
// function of its calls, and the results are put together in the tape's
// order, so a result is the same with any crew or none; only when each
// piece runs changes. One crew shared by several solves bounds the
// helpers of all of them together. Safe for concurrent use.
type Crew struct {
	helpers chan struct{} // one token per helper at work
}

// NewCrew is a crew of n helpers (nil, no helper, when n < 1).
func NewCrew(n int) *Crew {
	if n < 1 {
		return nil
	}
	return &Crew{helpers: make(chan struct{}, n)}
}

// each runs task(0), …, task(n−1), the caller taking them in that order
// and free helpers joining in (a task may call each again: it never waits
// for a helper, so nothing deadlocks), and returns when all are done. A
// nil crew runs them one after the other.
func (c *Crew) each(n int, task func(i int)) {
	if c == nil || n < 2 {
		for i := range n {
			task(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			task(i)
		}
	}
	var wg sync.WaitGroup
spawn:
	for range n - 1 {
		select {
		case c.helpers <- struct{}{}:
			wg.Add(1)
			go func() {
				defer func() { <-c.helpers; wg.Done() }()
				work()
			}()
		default:
			break spawn
		}
	}
	work()
	wg.Wait()
}

// A keyIndex maps a state's key to the first state of its layer with it
// (state.same links the rest): a hash table of open addressing over keys
// that are hashes already (entHash), emptied by a new generation instead
// of a clear, since a layer is emptied at every call and most are small.
type keyIndex struct {
	slots []keySlot // a power of two of them, at most half used
	n     int
	gen   uint32
}

type keySlot struct {
	key uint64
	v   int32
	gen uint32 // the slot is used when gen is the index's
}

func (x *keyIndex) reset() {
	x.n, x.gen = 0, x.gen+1
	if x.gen == 0 { // wrapped: old stamps could match again
		clear(x.slots)
		x.gen = 1
	}
}

func (x *keyIndex) slot(key uint64) int {
	mask := len(x.slots) - 1
	k := int(mix64(key)) & mask
	for x.slots[k].gen == x.gen && x.slots[k].key != key {
		k = (k + 1) & mask
	}
	return k
}

func (x *keyIndex) get(key uint64) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	s := &x.slots[x.slot(key)]
	return s.v, s.gen == x.gen
}

func (x *keyIndex) set(key uint64, v int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	s := &x.slots[x.slot(key)]
	if s.gen != x.gen {
		x.n++
	}
	*s = keySlot{key: key, v: v, gen: x.gen}
}

func (x *keyIndex) grow() {
	old, gen := x.slots, x.gen
	x.slots = make([]keySlot, max(64, 2*len(old)))
	x.n, x.gen = 0, 1
	for _, s := range old {
		if s.gen == gen {
			x.set(s.key, s.v)
		}
	}
}

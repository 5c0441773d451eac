package hindsight

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// A Memo solves each distinct tape once. A caller that replays the same
// sessions under several policies gets, for a policy that sent exactly
// what an earlier one sent (whatif's variants that change nothing a
// session asks for), the earlier solve's result. Safe for concurrent use:
// a tape being solved is waited for, not solved twice, and the result is
// the same whichever caller solved it (Solve is deterministic). The zero
// Memo is ready to use; it keeps every tape it solved, and its result.
type Memo struct {
	mu     sync.Mutex
	tapes  map[uint64][]*solved // by tapeKey
	solves int                  // tapes solved, not found
}

// solved is one tape's Solve, finished when done is closed.
type solved struct {
	calls []Call
	opts  Options
	done  chan struct{}
	res   *Result
	err   error
}

// Solve is Solve(ctx, calls, opts), or the result of an earlier call with the
// same calls (every field of every call equal; times by ==, so the same
// instant in the same zone) and the same options (rate card and latency
// by pointer or value). A found tape is compared with the one asked for
// in full, so a key collision costs a solve, never a wrong result. Each
// caller gets its own Result, which it may change as Separate does; the
// slices in it are shared, and nothing writes them in place. A solve
// that ctx stopped is not kept: the next caller solves again.
func (m *Memo) Solve(ctx context.Context, calls []Call, opts Options) (*Result, error) {
	key := tapeKey(calls, opts)
	m.mu.Lock()
	for _, e := range m.tapes[key] {
		if sameTape(e.calls, calls) && sameOptions(&e.opts, &opts) {
			m.mu.Unlock()
			<-e.done
			return e.result()
		}
	}
	e := &solved{calls: calls, opts: opts, done: make(chan struct{})}
	if m.tapes == nil {
		m.tapes = map[uint64][]*solved{}
	}
	m.tapes[key] = append(m.tapes[key], e)
	m.solves++
	m.mu.Unlock()
	e.res, e.err = Solve(ctx, calls, opts)
	if e.err != nil && ctx.Err() != nil {
		m.mu.Lock()
		m.tapes[key] = slices.DeleteFunc(m.tapes[key], func(x *solved) bool { return x == e })
		m.solves--
		m.mu.Unlock()
	}
	close(e.done)
	return e.result()
}

// Solves is the number of tapes m solved, not found.
func (m *Memo) Solves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.solves
}

func (e *solved) result() (*Result, error) {
	if e.err != nil {
		return nil, e.err
	}
	r := *e.res
	return &r, nil
}

// tapeKey hashes every field of every call, and the search options.
func tapeKey(calls []Call, opts Options) uint64 {
	h := xxhash.New()
	b := binary.LittleEndian.AppendUint64(nil, uint64(opts.Beam))
	b = binary.LittleEndian.AppendUint64(b, uint64(opts.FullChoices))
	b = binary.LittleEndian.AppendUint64(b, uint64(opts.MaxLayerEntries))
	for i := range calls {
		shared := 0
		if i > 0 {
			shared = commonPrefix(calls[i].Blocks, calls[i-1].Blocks)
		}
		b = appendCall(b, &calls[i], shared)
		h.Write(b)
		b = b[:0]
	}
	h.Write(b)
	return h.Sum64()
}

// sameTape reports whether a and b are the same requests: every field of
// Call (TestMemoComparesEveryField keeps this list whole).
func sameTape(a, b []Call) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Time != y.Time || x.Key != y.Key || x.Model != y.Model || x.Total != y.Total || x.Output != y.Output ||
			x.ReadLimit != y.ReadLimit || x.Limited != y.Limited || x.KeepAlive != y.KeepAlive || x.KeptAlive != y.KeptAlive || x.ReadTokens != y.ReadTokens || x.ReadInside != y.ReadInside || x.Window != y.Window || x.Started != y.Started || x.Fixed != y.Fixed ||
			!slices.Equal(x.Policy, y.Policy) || !slices.Equal(x.Blocks, y.Blocks) {
			return false
		}
	}
	return true
}

func sameOptions(a, b *Options) bool {
	return a.Prices == b.Prices && a.Beam == b.Beam && a.FullChoices == b.FullChoices && a.MaxLayerEntries == b.MaxLayerEntries &&
		(a.Latency == b.Latency || a.Latency != nil && b.Latency != nil && *a.Latency == *b.Latency)
}

package sim

import (
	"sync"

	"github.com/ctxsim/ctxsim/traces"
)

// BlockHashes keeps the content hashes (traces.Block.Hash) of sessions'
// event and floor blocks, computed once per session and shared by every
// replay of it:
// each policy of a comparison, each cell of a sweep. Hashing the blocks'
// text was the largest part of projecting an event into the view. A
// session must not change while its hashes are kept. The zero value is
// ready; it is safe for concurrent use.
type BlockHashes struct{ m sync.Map } // *traces.Session → *sessionHashes

type sessionHashes struct {
	once  sync.Once
	h     [][]uint64 // by event index
	floor []uint64   // of s.Floor's blocks
	// copied marks the events whose Meta says traces.MetaCopied, read
	// once: a map lookup on every assistant event of every replay was
	// a tenth of a microsecond a call.
	copied []bool
}

// session is what c keeps of s, computed on first use.
func (c *BlockHashes) session(s *traces.Session) *sessionHashes {
	v, _ := c.m.LoadOrStore(s, &sessionHashes{})
	sh := v.(*sessionHashes)
	sh.once.Do(func() {
		sh.h = make([][]uint64, len(s.Events))
		sh.copied = make([]bool, len(s.Events))
		for i := range s.Events {
			sh.copied[i] = s.Events[i].Meta[traces.MetaCopied] == "true"
			bs := s.Events[i].Blocks
			hs := make([]uint64, len(bs))
			for j := range bs {
				hs[j] = bs[j].Hash()
			}
			sh.h[i] = hs
		}
		sh.floor = make([]uint64, len(s.Floor))
		for i := range s.Floor {
			sh.floor[i] = s.Floor[i].Hash()
		}
	})
	return sh
}

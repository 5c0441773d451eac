package sim

import (
	"sync"

	"github.com/ctxsim/ctxsim/traces"
)

// BlockHashes keeps the content hashes (traces.Block.Hash) of sessions'
// event blocks, computed once per session and shared by every replay of it:
// each policy of a comparison, each cell of a sweep. Hashing the blocks'
// text was the largest part of projecting an event into the view. A
// session must not change while its hashes are kept. The zero value is
// ready; it is safe for concurrent use.
type BlockHashes struct{ m sync.Map } // *traces.Session → *sessionHashes

type sessionHashes struct {
	once sync.Once
	h    [][]uint64 // by event index
}

// of is s's block hashes by event index, computing them on first use.
func (c *BlockHashes) of(s *traces.Session) [][]uint64 {
	v, _ := c.m.LoadOrStore(s, &sessionHashes{})
	sh := v.(*sessionHashes)
	sh.once.Do(func() {
		sh.h = make([][]uint64, len(s.Events))
		for i := range s.Events {
			bs := s.Events[i].Blocks
			hs := make([]uint64, len(bs))
			for j := range bs {
				hs[j] = bs[j].Hash()
			}
			sh.h[i] = hs
		}
	})
	return sh.h
}

package sim

import (
	"strconv"
	"strings"
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
	// meta is what the engine reads of each event's Meta, read once: two
	// map lookups on every assistant event of every replay were a fifth
	// of a microsecond a call.
	meta []eventMeta
}

// eventMeta is what an event's Meta says to the engine.
type eventMeta struct {
	copied bool // traces.MetaCopied
	outOK  bool // out is set
	out    int  // "output_tokens", parsed
}

func metaOf(e *traces.Event) eventMeta {
	m := eventMeta{copied: e.Meta[traces.MetaCopied] == "true"}
	if v, ok := e.Meta["output_tokens"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			m.out, m.outOK = n, true
		}
	}
	return m
}

// session is what c keeps of s, computed on first use.
func (c *BlockHashes) session(s *traces.Session) *sessionHashes {
	v, _ := c.m.LoadOrStore(s, &sessionHashes{})
	sh := v.(*sessionHashes)
	sh.once.Do(func() {
		sh.h = make([][]uint64, len(s.Events))
		sh.meta = make([]eventMeta, len(s.Events))
		for i := range s.Events {
			sh.meta[i] = metaOf(&s.Events[i])
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

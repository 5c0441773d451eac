package estimate

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// FloorHashes is prompt.FloorHashes: the estimators of one session that
// share one (and the session's Builder) hash a new floor once between them.
type FloorHashes = prompt.FloorHashes

// floorWith is RoughFloor(v) with the floor's block hashes hs (tools, then
// system); nil hs has each block hashed where it is sized.
func (s *RoughSizes) floorWith(v *prompt.View, hs []uint64) int {
	h := func(i int) uint64 {
		if hs == nil {
			return 0
		}
		return hs[i]
	}
	n := 0
	for i := range v.Tools {
		if b := &v.Tools[i]; b.Opaque() {
			n += b.Tokens
		} else {
			n += s.size(b, h(i), fnTool)
		}
	}
	for i := range v.System {
		n += s.Block(&v.System[i], h(len(v.Tools)+i))
	}
	return n
}

// countBlocks is the count of blocks, whose hashes are hs.
func (m *Memo) countBlocks(blocks []traces.Block, hs []uint64) int {
	n := 0
	for i := range blocks {
		n += m.CountHash(&blocks[i], hs[i])
	}
	return n
}

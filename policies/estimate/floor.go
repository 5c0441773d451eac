package estimate

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// FloorHashes keeps the block hashes (traces.Block.Hash) of the last floor
// it was asked about, by the floor's slice identity as the estimators key a
// floor: the estimators of one session that share one hash a new floor
// (tens of KB of tool schemas and system prompt) once between them, not
// once each. A nil *FloorHashes keeps nothing. It is not safe for
// concurrent use (one per session).
type FloorHashes struct {
	key floorKey
	hs  []uint64 // tools, then system
}

// of is the hashes of v's tools then system blocks. The slice is valid
// until the next call.
func (f *FloorHashes) of(v *prompt.View) []uint64 {
	k := keyOf(v)
	if f != nil && k == f.key && k != (floorKey{}) && len(f.hs) == k.nt+k.ns {
		return f.hs
	}
	var hs []uint64
	if f != nil {
		hs = f.hs[:0]
	}
	for i := range v.Tools {
		hs = append(hs, v.Tools[i].Hash())
	}
	for i := range v.System {
		hs = append(hs, v.System[i].Hash())
	}
	if f != nil {
		f.key, f.hs = k, hs
	}
	return hs
}

// floorWith is RoughFloor(v) with the floor's block hashes hs (tools, then
// system).
func (s *RoughSizes) floorWith(v *prompt.View, hs []uint64) int {
	n := 0
	for i := range v.Tools {
		if b := &v.Tools[i]; b.Opaque() {
			n += b.Tokens
		} else {
			n += s.size(b, hs[i], fnTool)
		}
	}
	for i := range v.System {
		n += s.Block(&v.System[i], hs[len(v.Tools)+i])
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

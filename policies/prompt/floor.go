package prompt

import "github.com/ctxsim/ctxsim/traces"

// FloorHashes keeps the block hashes (traces.Block.Hash) of the last floor
// it was asked about, by the floor's slice identity (the first block of
// the tools and of the system prompt, and their lengths): views are
// immutable, so the same slices are the same floor. A Builder and a
// session's estimators that share one hash a new floor (tens of KB of tool
// schemas and system prompt) once between them, not once each, and a
// floor whose hashes the caller kept (a replay of the same session) is not
// hashed at all (Keep). A nil *FloorHashes keeps nothing. It is not safe
// for concurrent use (one per session).
type FloorHashes struct {
	tools, sys *traces.Block
	nt, ns     int
	hs         []uint64 // tools, then system
	ok         bool
}

func (f *FloorHashes) holds(v *View) bool {
	return f.ok && len(v.Tools) == f.nt && len(v.System) == f.ns && first(v.Tools) == f.tools && first(v.System) == f.sys
}

func first(bs []traces.Block) *traces.Block {
	if len(bs) == 0 {
		return nil
	}
	return &bs[0]
}

// Of is the hashes of v's tool blocks then system blocks. The slice is
// valid until the next call of Of or Keep.
func (f *FloorHashes) Of(v *View) []uint64 {
	if f != nil && f.holds(v) && (f.tools != nil || f.sys != nil) {
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
	f.keep(v, hs)
	return hs
}

// Keep records hs (copied) as the hashes of v's floor, tools then system,
// which the caller already has: len(hs) must be len(v.Tools)+len(v.System).
func (f *FloorHashes) Keep(v *View, hs []uint64) {
	if f != nil && len(hs) == len(v.Tools)+len(v.System) {
		f.keep(v, append(f.hs[:0], hs...))
	}
}

func (f *FloorHashes) keep(v *View, hs []uint64) {
	if f == nil {
		return
	}
	f.tools, f.sys, f.nt, f.ns, f.hs, f.ok = first(v.Tools), first(v.System), len(v.Tools), len(v.System), hs, true
}

package hindsight

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
)

// An outcome is what a call does to a state under some breakpoints, as
// provider.AnthropicStep decides it: the live entries its lookbacks find
// (each read and refreshed by its own tier; the longest is the hit) and
// the breakpoints that write (past the minimum length and the hit), with
// their TTLs. The call's usage, its response time and the state after it
// follow from those alone, so two choices of one state with the same
// outcome make the same child at the same cost: the second would only
// merge into the first's (add keeps the cheaper, and they tie), and the
// search skips it without stepping it (about a third of the candidates
// on the shared sessions).
type outcome struct {
	nr, nw uint8
	reads  [prompt.MaxBreakpoints + 1]int32 // blocks found, sorted
	writes [prompt.MaxBreakpoints]write
}

// write is a breakpoint that writes, in little room.
type write struct {
	block int32
	ttl   prompt.TTL
}

// stepAll makes the search step every choice, repeats included (tests
// compare the two).
var stepAll bool

// siblings are the outcomes of the choices one state has tried on the
// current call, and the lookbacks they needed.
type siblings struct {
	ok bool // the call's outcomes are predictable (no observed revival)
	// blocks, minLen and limit are the call's prompt, minimum cacheable
	// length and read limit.
	blocks []Block
	minLen int
	limit  int
	outs   []outcome
	index  keyIndex // hash of an outcome → its index in outs
	looks  []lookAt
}

// lookAt is where a lookback from block from finds a live entry (-1: none).
type lookAt struct{ from, found int }

// resetSiblings readies the siblings for the next state's choices on
// call i.
func (s *solver) resetSiblings(i int) {
	sb := &s.sibs
	// provider.Revive adds entries before the lookbacks, depending on the
	// breakpoints: those calls are stepped choice by choice.
	sb.ok = s.calls[i].keep() < 0 && !stepAll
	sb.blocks, sb.minLen, sb.limit = s.calls[i].Blocks, s.rules[s.model[i]].price.MinCacheable, s.calls[i].readLimit()
	sb.outs, sb.looks = sb.outs[:0], sb.looks[:0]
	sb.index.reset()
}

// repeated reports whether breakpoints bps of state st (of layer l) on
// call i have the outcome of a choice already tried on st since
// resetSiblings, and notes the outcome if not.
func (s *solver) repeated(l *layer, st *state, i int, bps []prompt.Breakpoint) bool {
	sb := &s.sibs
	if !sb.ok {
		return false
	}
	blocks, minLen, limit := sb.blocks, sb.minLen, sb.limit
	var o outcome
	hit := 0
	read := func(from int) {
		j := s.lookFrom(l, st, i, from, limit)
		if j < 0 {
			return
		}
		hit = max(hit, blocks[j].End)
		// Insert j, sorted, once.
		k := 0
		for k < int(o.nr) && o.reads[k] < int32(j) {
			k++
		}
		if k < int(o.nr) && o.reads[k] == int32(j) {
			return
		}
		for m := int(o.nr); m > k; m-- {
			o.reads[m] = o.reads[m-1]
		}
		o.reads[k] = int32(j)
		o.nr++
	}
	for _, bp := range bps {
		if blocks[bp.Block].End >= minLen {
			read(bp.Block)
		}
	}
	if n := len(bps); n > 0 && limit >= 0 && limit < bps[n-1].Block {
		read(limit)
	}
	for _, bp := range bps {
		if end := blocks[bp.Block].End; end >= minLen && end > hit {
			o.writes[o.nw] = write{int32(bp.Block), bp.TTL}
			o.nw++
		}
	}
	const m = 0x9e3779b97f4a7c15
	h := uint64(o.nr) | uint64(o.nw)<<8
	for _, j := range o.reads[:o.nr] {
		h = (h ^ uint64(j)) * m
	}
	for _, w := range o.writes[:o.nw] {
		h = (h ^ uint64(w.block)<<8 ^ uint64(w.ttl)) * m
	}
	h = mix64(h)
	if k, ok := sb.index.get(h); ok {
		// Another outcome with the same hash is not noted: only an equal
		// one is skipped.
		if sb.outs[k] == o {
			s.skipped++
			return true
		}
		return false
	}
	sb.index.set(h, int32(len(sb.outs)))
	sb.outs = append(sb.outs, o)
	return false
}

// lookFrom is the block where AnthropicStep's lookback from block from
// (none past limit) finds a live entry of state st on call i, or -1. The
// refreshes of other breakpoints' lookbacks only extend a live entry's
// life, so what each finds does not depend on the others.
func (s *solver) lookFrom(l *layer, st *state, i, from, limit int) int {
	sb := &s.sibs
	for _, x := range sb.looks {
		if x.from == from {
			return x.found
		}
	}
	c := &s.calls[i]
	m, t := s.model[i], c.Time.UnixNano()
	ents := l.entsOf(st)
	found := -1
	for j := min(from, limit); j >= 0 && j >= from-provider.Lookback; j-- {
		chain := c.Blocks[j].Chain
		if st.mask&chainBit(chain) == 0 {
			continue
		}
		if x := findEnt(ents, m, chain); x != nil && x.ready <= t && t < x.expires {
			found = j
			break
		}
	}
	sb.looks = append(sb.looks, lookAt{from, found})
	return found
}

// findEnt is the entry of model m and chain in ents (sorted by model,
// chain), or nil.
func findEnt(ents []ent, m int32, chain uint64) *ent {
	lo, hi := 0, len(ents)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if x := &ents[h]; x.model < m || x.model == m && x.chain < chain {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(ents) && ents[lo].model == m && ents[lo].chain == chain {
		return &ents[lo]
	}
	return nil
}

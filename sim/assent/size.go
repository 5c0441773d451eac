package assent

import (
	"maps"
	"slices"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces/capture"
)

// size places each call's block ends from the bills (see the package
// doc), tenant-wide: pos keeps the boundaries bills placed, by prefix
// chain, so a prefix has one size in every request that sends it. It
// returns how many bill positions contradicted earlier ones.
func size(ws []*wire) int {
	pos := map[uint64]int{}     // ends bills placed
	soft := map[uint64]int{}    // ends shared out between them
	seen := map[uint64]bool{}   // prefixes an earlier request sent
	marked := map[uint64]bool{} // prefixes an earlier request marked
	conflicts := 0
	var hosted []hostedWire
	for _, w := range ws {
		n := len(w.blocks)
		u := w.usage
		w.total = int(u.Prompt())
		anchors := map[int]int{}
		for i := range w.blocks {
			if v, ok := pos[w.blocks[i].Chain]; ok {
				anchors[i] = v
			}
		}
		place := func(i, v int) bool {
			for j, a := range anchors {
				if (j < i && a > v) || (j > i && a < v) || (j == i && a != v) {
					return false
				}
			}
			anchors[i] = v
			return true
		}
		last := w.lastMark()
		written := int(u.CacheRead + u.Writes())
		switch {
		case n == 0:
		case w.api == capture.Anthropic:
			// The API caches through the last marker: read + writes
			// end there; the input after it ends the prompt.
			if last >= 0 && written > 0 && !place(last, written) {
				conflicts++
			}
			// 1h markers come before 5m ones (the API requires it): the
			// 1h writes end at the last 1h marker.
			if l1 := w.lastMark1h(); l1 >= 0 && l1 < last && u.CacheWrite1h > 0 && u.CacheWrite5m > 0 &&
				!place(l1, int(u.CacheRead+u.CacheWrite1h)) {
				conflicts++
			}
			if last < n-1 && !place(n-1, w.total) {
				conflicts++
			}
		case w.hosted:
			// The bill counts the hosted tool's continuation too: it
			// places no end of the request (resized below).
		default:
			// OpenAI caches the whole prompt.
			if !place(n-1, w.total) {
				conflicts++
			}
		}
		if read := int(u.CacheRead); read > 0 && n > 0 {
			j := -1
			for i, v := range anchors {
				if v == read && (j < 0 || i > j) {
					j = i
				}
			}
			if j < 0 {
				limit := n - 1
				if w.api == capture.Anthropic && last >= 0 {
					limit = last
				}
				// The read ends where an entry is: on Anthropic the
				// deepest block an earlier request marked within the
				// lookback of one of this request's markers (the
				// provider reads the longest live one), else one of this
				// request's markers (an entry from outside the capture:
				// the one nearest the read by the local sizes); on
				// OpenAI the deepest boundary of an earlier prompt.
				best := -1
				for i := 0; i <= limit; i++ {
					if _, ok := anchors[i]; ok {
						continue
					}
					c := w.blocks[i].Chain
					switch {
					case w.api != capture.Anthropic && seen[c]:
						best = i
					case w.api == capture.Anthropic && marked[c] && w.inLookback(i):
						best = i
					}
				}
				if best < 0 {
					ends := w.interpolate(w.withSoft(anchors, soft))
					for i := 0; i <= limit; i++ {
						if _, ok := anchors[i]; ok || (w.api == capture.Anthropic && !w.marked(i)) {
							continue
						}
						if best < 0 || abs(ends[i]-read) <= abs(ends[best]-read) {
							best = i
						}
					}
				}
				if best >= 0 && place(best, read) {
					j = best
				} else {
					conflicts++
				}
			}
			if j >= 0 && !seen[w.blocks[j].Chain] {
				w.outside = j
			}
		}
		w.ends = w.interpolate(w.withSoft(anchors, soft))
		for i, v := range anchors {
			pos[w.blocks[i].Chain] = v
		}
		for i := range w.blocks {
			seen[w.blocks[i].Chain] = true
			if _, ok := soft[w.blocks[i].Chain]; !ok && !w.hosted {
				soft[w.blocks[i].Chain] = w.ends[i]
			}
		}
		if w.hosted {
			hosted = append(hosted, hostedWire{w, anchors})
		}
		for _, bp := range w.sent {
			marked[w.blocks[bp.Block].Chain] = true
		}
	}
	// A hosted tool's response is sized by the requests that send its
	// request's blocks again (the next one sends them all), its own read
	// kept; what its bill counts beyond them is the tool's continuation,
	// input no later request holds (request bills it past the last block,
	// uncached).
	for _, h := range hosted {
		w := h.w
		anchors := maps.Clone(h.anchors)
		if anchors == nil {
			anchors = map[int]int{}
		}
		for i := range w.blocks {
			if v, ok := pos[w.blocks[i].Chain]; ok {
				if _, own := anchors[i]; !own {
					anchors[i] = v
				}
			}
		}
		w.ends = w.interpolate(w.withSoft(anchors, soft))
		if n := len(w.ends); n > 0 && w.ends[n-1] > w.total {
			conflicts++
		}
	}
	return conflicts
}

// hostedWire is a hosted tool's call and the ends its own bill placed.
type hostedWire struct {
	w       *wire
	anchors map[int]int
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lastMark is the last block the request marks (a top-level automatic
// marker marks the last cacheable block), -1 for none.
func (w *wire) lastMark() int {
	last := -1
	for _, bp := range w.sent {
		last = max(last, bp.Block)
	}
	if w.auto != 0 {
		for i := len(w.blocks) - 1; i >= 0; i-- {
			if w.blocks[i].Cacheable {
				last = max(last, i)
				break
			}
		}
	}
	return last
}

// withSoft is anchors plus the ends an earlier request gave blocks of
// this one (shared out, not placed by a bill), where they agree with
// the anchors: a prefix keeps its size from request to request.
func (w *wire) withSoft(anchors map[int]int, soft map[uint64]int) map[int]int {
	out := make(map[int]int, len(anchors))
	for i, v := range anchors {
		out[i] = v
	}
	idx := make([]int, 0, len(anchors))
	for i := range anchors {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	k := 0 // idx[k] is the first anchor after block i
	lo := 0
	for i := range w.blocks {
		for k < len(idx) && idx[k] < i {
			lo = anchors[idx[k]]
			k++
		}
		if _, ok := anchors[i]; ok {
			continue
		}
		v, ok := soft[w.blocks[i].Chain]
		if !ok || v < lo || (k < len(idx) && v > anchors[idx[k]]) {
			continue
		}
		out[i], lo = v, v
	}
	return out
}

// inLookback reports whether block i is a marker of w or within the
// provider's lookback before one.
func (w *wire) inLookback(i int) bool {
	for _, bp := range w.sent {
		if i <= bp.Block && i >= bp.Block-provider.Lookback {
			return true
		}
	}
	return false
}

// lastMark1h is the last block marked with the 1h TTL, -1 for none.
func (w *wire) lastMark1h() int {
	last := -1
	for _, bp := range w.sent {
		if bp.TTL == prompt.TTL1h {
			last = max(last, bp.Block)
		}
	}
	return last
}

func (w *wire) marked(i int) bool {
	for _, bp := range w.sent {
		if bp.Block == i {
			return true
		}
	}
	return false
}

// interpolate is the blocks' ends: the placed ones where placed, the
// tokens between two placed ends shared by the blocks' local sizes, and
// local sizes after the last placed end.
func (w *wire) interpolate(anchors map[int]int) []int {
	n := len(w.blocks)
	ends := make([]int, n)
	idx := make([]int, 0, len(anchors))
	for i := range anchors {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	a, A := -1, 0
	for _, b := range idx {
		B := anchors[b]
		tot := 0
		for i := a + 1; i <= b; i++ {
			tot += w.est[i]
		}
		cum := 0
		for i := a + 1; i <= b; i++ {
			cum += w.est[i]
			ends[i] = A + int(int64(B-A)*int64(cum)/int64(max(tot, 1)))
		}
		ends[b] = B
		a, A = b, B
	}
	for i := a + 1; i < n; i++ {
		A += w.est[i]
		ends[i] = A
	}
	return ends
}

package tiktoken

// The byte-pair merge of one piece that is not itself a token, as
// tiktoken's _byte_pair_merge does it: start from single bytes and merge,
// again and again, the adjacent pair whose concatenation has the lowest
// rank (the leftmost on a tie) until no pair is a token. Short pieces use
// tiktoken's quadratic scan; long ones (minified code, base64, long runs)
// a heap, which picks the same pair at every step.

const noRank = ^uint32(0)

type part struct {
	start int    // byte offset of this part in the piece
	rank  uint32 // rank of this part joined with the next, or noRank
}

// merge appends the ranks of piece's tokens to dst.
func (t *table) merge(piece string, dst []uint32) []uint32 {
	if len(piece) > 256 {
		return t.mergeLong(piece, dst)
	}
	var buf [258]part
	parts := buf[:len(piece)+1]
	pair := func(i int) uint32 { // rank of parts[i] joined with parts[i+1]
		if i+2 >= len(parts) {
			return noRank
		}
		if r, ok := t.rank(piece[parts[i].start:parts[i+2].start]); ok {
			return r
		}
		return noRank
	}
	for i := range parts {
		parts[i] = part{start: i, rank: noRank}
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = pair(i)
	}
	for len(parts) > 2 {
		best, at := noRank, -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = pair(at)
		if at > 0 {
			parts[at-1].rank = pair(at - 1)
		}
	}
	for i := 0; i+1 < len(parts); i++ {
		r, _ := t.rank(piece[parts[i].start:parts[i+1].start])
		dst = append(dst, r)
	}
	return dst
}

// mergeLong is merge over a linked list of parts with a heap of candidate
// pairs; a candidate is stale once either of its parts has changed.
func (t *table) mergeLong(piece string, dst []uint32) []uint32 {
	n := len(piece)
	next := make([]int32, n) // next part's start, or n
	prev := make([]int32, n)
	ver := make([]uint32, n) // bumped when the part starting here changes
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	h := make(pairHeap, 0, n)
	push := func(i int) {
		j := int(next[i])
		if j >= n {
			return
		}
		if r, ok := t.rank(piece[i:int(next[j])]); ok {
			h.push(cand{rank: r, start: int32(i), ver: ver[i]})
		}
	}
	for i := 0; i+1 < n; i++ {
		push(i)
	}
	for len(h) > 0 {
		c := h.pop()
		i := int(c.start)
		if c.ver != ver[i] || next[i] >= int32(n) {
			continue
		}
		j := next[i]
		// Join i with j: j disappears, i grows.
		next[i] = next[j]
		if next[j] < int32(n) {
			prev[next[j]] = int32(i)
		}
		ver[i]++
		ver[j]++
		push(i)
		if p := prev[i]; p >= 0 {
			ver[p]++
			push(int(p))
		}
	}
	for i := 0; i < n; i = int(next[i]) {
		r, _ := t.rank(piece[i:int(next[i])])
		dst = append(dst, r)
	}
	return dst
}

type cand struct {
	rank  uint32
	start int32
	ver   uint32
}

// pairHeap is a binary min-heap of candidates by (rank, start), typed so
// that a push does not box its candidate.
type pairHeap []cand

func (c cand) less(d cand) bool {
	return c.rank < d.rank || c.rank == d.rank && c.start < d.start
}

func (h *pairHeap) push(c cand) {
	*h = append(*h, c)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].less(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *pairHeap) pop() cand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(a) && a[l].less(a[m]) {
			m = l
		}
		if r := l + 1; r < len(a) && a[r].less(a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

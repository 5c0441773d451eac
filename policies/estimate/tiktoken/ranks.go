package tiktoken

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// A table maps a token's bytes to its rank. It is built once, on the first
// count, from the offline loader's .tiktoken file (one "base64 rank" line
// per token, ranks in order): the tokens are decoded into one arena and
// indexed by an open-addressing table of ranks, so loading costs a base64
// pass and one probe per token, with no per-token allocation and no sort.
// The file is cut into one piece per core; each piece is sized, then
// decoded and indexed in place (slots are claimed with a compare-and-swap,
// and a probe finds a token whatever the insertion order).
type table struct {
	arena []byte   // every token's bytes, by rank
	off   []uint32 // token r is arena[off[r]:off[r+1]]
	slots []uint32 // rank+1 at the token's hash slot; 0 is empty
	mask  uint64
	seed  maphash.Seed
	byte1 [256]uint32 // rank+1 of each single byte while loading, then rank
}

// piece is one worker's share of the file.
type piece struct {
	data        []byte
	line, first int // line number (1-based) and rank of its first line
	lines       int
	base, end   int // where its tokens start and end in the arena
	err         error
}

// cut cuts the first line off data.
func cut(data []byte) (line, rest []byte) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return data, nil
	}
	return data[:nl], data[nl+1:]
}

// decodedLen is the length of padded base64 b decoded.
func decodedLen(b []byte) int {
	n := len(b) / 4 * 3
	for i := len(b) - 1; i >= 0 && i >= len(b)-2 && b[i] == '='; i-- {
		n--
	}
	return n
}

// fill decodes p's tokens into t's arena and indexes them.
func (p *piece) fill(t *table) {
	pos, r := p.base, p.first
	arena, off, slots, mask := t.arena, t.off, t.slots, t.mask
	for line, data := p.line, p.data; len(data) > 0; line++ {
		var l []byte
		l, data = cut(data)
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		rank, ok := 0, sp < len(l)-1
		for _, d := range l[sp+1:] {
			if d < '0' || d > '9' {
				ok = false
				break
			}
			rank = rank*10 + int(d-'0')
		}
		if !ok || rank != r {
			p.err = fmt.Errorf("line %d: want %q's rank to be %d", line, l, r)
			return
		}
		n, err := base64.StdEncoding.Decode(arena[pos:], l[:sp])
		if err != nil || n == 0 || n != decodedLen(l[:sp]) {
			p.err = fmt.Errorf("line %d: bad token %q", line, l[:sp])
			return
		}
		tok := arena[pos : pos+n]
		pos += n
		off[r+1] = uint32(pos)
		h := maphash.Bytes(t.seed, tok) & mask
		for !atomic.CompareAndSwapUint32(&slots[h], 0, uint32(r)+1) {
			h = (h + 1) & mask
		}
		if n == 1 {
			t.byte1[tok[0]] = uint32(r) + 1
		}
		r++
	}
	if r != p.first+p.lines {
		p.err = fmt.Errorf("lines %d-%d: %d tokens on %d lines", p.line, p.line+p.lines-1, r-p.first, p.lines)
	}
	p.end = pos
}

func parseTable(data []byte) (*table, error) {
	t := &table{seed: maphash.MakeSeed()}
	k := min(4, runtime.GOMAXPROCS(0))
	var ps []piece
	for from := 0; from < len(data); {
		to := len(data)
		if len(ps) < k-1 {
			to = from + (len(data)-from)/(k-len(ps))
			if nl := bytes.IndexByte(data[to:], '\n'); nl >= 0 {
				to += nl + 1
			} else {
				to = len(data)
			}
		}
		ps = append(ps, piece{data: data[from:to]})
		from = to
	}
	// Each piece decodes at a base its text's length bounds (base64 is 4
	// bytes for 3), in parallel; the gaps are closed up after.
	n, base := 0, 0
	for i := range ps {
		p := &ps[i]
		p.lines = bytes.Count(p.data, []byte{'\n'})
		if len(p.data) > 0 && p.data[len(p.data)-1] != '\n' {
			p.lines++
		}
		p.line, p.first, p.base = n+1, n, base
		n += p.lines
		base += len(p.data) * 3 / 4
	}
	t.arena = make([]byte, base)
	t.off = make([]uint32, n+1)
	slots := uint64(1) << bits.Len64(uint64(n)*2)
	t.slots, t.mask = make([]uint32, slots), slots-1
	var wg sync.WaitGroup
	for i := range ps {
		wg.Go(func() { ps[i].fill(t) })
	}
	wg.Wait()
	end := 0
	for i := range ps {
		p := &ps[i]
		if p.err != nil {
			return nil, p.err
		}
		// Move the piece down to where the last one ended; off[first] is
		// the last piece's, already moved.
		if d := p.base - end; d > 0 {
			copy(t.arena[end:], t.arena[p.base:p.end])
			for r := p.first + 1; r <= p.first+p.lines; r++ {
				t.off[r] -= uint32(d)
			}
		}
		end += p.end - p.base
	}
	t.arena = t.arena[:end]
	for b, r := range t.byte1 {
		if r == 0 {
			return nil, fmt.Errorf("no token for byte %#x", b)
		}
		t.byte1[b] = r - 1
	}
	return t, nil
}

// rank is the rank of token b, if it is one.
func (t *table) rank(b string) (uint32, bool) {
	if len(b) == 1 {
		return t.byte1[b[0]], true
	}
	h := maphash.String(t.seed, b) & t.mask
	for {
		s := t.slots[h]
		if s == 0 {
			return 0, false
		}
		if r := s - 1; string(t.arena[t.off[r]:t.off[r+1]]) == b {
			return r, true
		}
		h = (h + 1) & t.mask
	}
}

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
	lines, size int // its lines and their tokens' decoded bytes
	base        int // where its tokens start in the arena
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

// measure counts p's lines and their decoded size, without decoding.
func (p *piece) measure() {
	for data := p.data; len(data) > 0; {
		var l []byte
		l, data = cut(data)
		sp := bytes.IndexByte(l, ' ')
		if sp < 0 {
			if len(l) == 0 {
				continue
			}
			p.err = fmt.Errorf("line %d: no rank in %q", p.line+p.lines, l)
			break
		}
		p.lines++
		p.size += decodedLen(l[:sp])
	}
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
	each := func(f func(p *piece)) error {
		var wg sync.WaitGroup
		for i := range ps {
			wg.Go(func() { f(&ps[i]) })
		}
		wg.Wait()
		for i := range ps {
			if ps[i].err != nil {
				return ps[i].err
			}
		}
		return nil
	}
	if err := each((*piece).measure); err != nil {
		return nil, err
	}
	n, size, line := 0, 0, 1
	for i := range ps {
		ps[i].line, ps[i].first, ps[i].base = line, n, size
		line += bytes.Count(ps[i].data, []byte{'\n'})
		n += ps[i].lines
		size += ps[i].size
	}
	t.arena = make([]byte, size)
	t.off = make([]uint32, n+1)
	slots := uint64(1) << bits.Len64(uint64(n)*2)
	t.slots, t.mask = make([]uint32, slots), slots-1
	if err := each(func(p *piece) { p.fill(t) }); err != nil {
		return nil, err
	}
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

package tiktoken

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
)

// A table maps a token's bytes to its rank. It is built once, on the first
// count, from the offline loader's .tiktoken file (one "base64 rank" line
// per token, ranks in order): the tokens go into one arena and an
// open-addressing index of ranks, so loading costs a base64 pass and one
// probe per token, with no per-token allocation and no sort. Decoding and
// hashing run on up to four cores; only the index writes are serial.
type table struct {
	arena []byte   // every token's bytes, by rank
	off   []uint32 // token r is arena[off[r]:off[r+1]]
	slots []uint32 // rank+1 at the token's hash slot; 0 is empty
	mask  uint64
	seed  maphash.Seed
	byte1 [256]uint32 // rank of each single byte
}

// chunk is one worker's share of the file, decoded.
type chunk struct {
	first  int      // rank of its first token
	arena  []byte   // its tokens' bytes
	ends   []uint32 // end of each token in arena
	hashes []uint64
	err    error
}

func (c *chunk) parse(data []byte, lines int, seed maphash.Seed) {
	line := c.first
	c.arena = make([]byte, 0, len(data)*3/4)
	c.ends = make([]uint32, 0, lines+1)
	c.hashes = make([]uint64, 0, lines+1)
	for len(data) > 0 {
		line++
		nl := bytes.IndexByte(data, '\n')
		var l []byte
		if nl < 0 {
			l, data = data, nil
		} else {
			l, data = data[:nl], data[nl+1:]
		}
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		rank, ok := 0, sp > 0 && sp < len(l)-1
		for _, d := range l[sp+1:] {
			if d < '0' || d > '9' {
				ok = false
				break
			}
			rank = rank*10 + int(d-'0')
		}
		if want := c.first + len(c.ends); !ok || rank != want {
			c.err = fmt.Errorf("line %d: want %q's rank to be %d", line, l, want)
			return
		}
		start := len(c.arena)
		var err error
		if c.arena, err = base64.StdEncoding.AppendDecode(c.arena, l[:sp]); err != nil || len(c.arena) == start {
			c.err = fmt.Errorf("line %d: bad token %q", line, l[:sp])
			return
		}
		c.ends = append(c.ends, uint32(len(c.arena)))
		c.hashes = append(c.hashes, maphash.Bytes(seed, c.arena[start:]))
	}
}

func parseTable(data []byte) (*table, error) {
	t := &table{seed: maphash.MakeSeed()}
	// Cut the file at line starts into one piece per worker; each piece's
	// first rank is its first line's number, counted here.
	k := min(4, runtime.GOMAXPROCS(0))
	chunks := make([]chunk, k)
	starts := []int{0}
	for i := 1; i < k; i++ {
		at := len(data) * i / k
		if nl := bytes.IndexByte(data[at:], '\n'); nl >= 0 {
			starts = append(starts, at+nl+1)
		}
	}
	starts = append(starts, len(data))
	chunks = chunks[:len(starts)-1]
	lines := make([]int, len(chunks))
	for i := range chunks {
		lines[i] = bytes.Count(data[starts[i]:starts[i+1]], []byte{'\n'})
		if i > 0 {
			chunks[i].first = chunks[i-1].first + lines[i-1]
		}
	}
	var wg sync.WaitGroup
	for i := range chunks {
		wg.Go(func() { chunks[i].parse(data[starts[i]:starts[i+1]], lines[i], t.seed) })
	}
	wg.Wait()
	n, size := 0, 0
	for i := range chunks {
		if chunks[i].err != nil {
			return nil, chunks[i].err
		}
		n += len(chunks[i].ends)
		size += len(chunks[i].arena)
	}
	t.arena = make([]byte, 0, size)
	t.off = make([]uint32, 1, n+1)
	slots := uint64(1) << bits.Len64(uint64(n)*2)
	t.slots, t.mask = make([]uint32, slots), slots-1
	for i := range chunks {
		c := &chunks[i]
		base := uint32(len(t.arena))
		t.arena = append(t.arena, c.arena...)
		for j, end := range c.ends {
			r := uint32(len(t.off) - 1)
			t.off = append(t.off, base+end)
			h := c.hashes[j] & t.mask
			for t.slots[h] != 0 {
				h = (h + 1) & t.mask
			}
			t.slots[h] = r + 1
			if t.off[r+1]-t.off[r] == 1 {
				t.byte1[t.arena[t.off[r]]] = r + 1
			}
		}
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

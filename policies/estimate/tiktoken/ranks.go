package tiktoken

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// A table maps a token's bytes to its rank. It is precomputed from the
// offline loader's .tiktoken file (one "base64 rank" line per token, ranks
// in order) and embedded in the binary in the layout it is used in, so
// loading it costs nothing: no decoding, no hashing, no allocation, and
// the operating system pages in only the parts a count touches. That is
// what puts the first count within a few milliseconds of process start
// (decoding and indexing the text file took ~60 ms of CPU per process).
// TestTables rebuilds every table from the loader's file and compares.
//
// The layout, all integers little-endian uint32 (read byte-wise, so the
// table works on any architecture and needs no unsafe):
//
//	magic "tkt1", n (tokens), nslots (a power of two), arena length
//	off   [n+1]   token r is arena[off[r]:off[r+1]]
//	slots [nslots] rank+1 at the token's hash slot (linear probing); 0 is empty
//	byte1 [256]   the rank of each single byte
//	arena          every token's bytes, by rank
type table struct {
	off, slots, arena string
	mask              uint64
	byte1             [256]uint32
}

const magic = "tkt1"

// le32 is the i'th little-endian uint32 of s.
func le32(s string, i uint64) uint32 {
	s = s[4*i : 4*i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// hash is a fixed hash of a token (the table is built offline, so it
// cannot use a per-process seed): wyhash's mixing of up to 16 bytes at a
// time, read as in wyhash for short inputs. Tokens are short; a hash of
// a long piece that is not a token only needs to be consistent.
func hash(s string) uint64 {
	const (
		p0 = 0xa0761d6478bd642f
		p1 = 0xe7037ed1a0b428db
		p2 = 0x8ebc6af09c88c6e3
	)
	mix := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		return hi ^ lo
	}
	n := len(s)
	h := uint64(n) ^ p0
	var a, b uint64
	switch {
	case n == 0:
	case n < 4:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	case n <= 8:
		a, b = uint64(u32(s)), uint64(u32(s[n-4:]))
	case n <= 16:
		a, b = u64(s), u64(s[n-8:])
	default:
		for t := s; len(t) > 16; t = t[16:] {
			h = mix(u64(t)^p1, u64(t[8:])^h)
		}
		a, b = u64(s[n-16:]), u64(s[n-8:])
	}
	return mix(p1^uint64(n), mix(a^p1, b^h))
}

func u32(s string) uint32 {
	s = s[:4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func u64(s string) uint64 {
	s = s[:8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// loadTable checks an embedded table's header and sizes and reads its
// single-byte ranks; the rest is used in place.
func loadTable(data string) (*table, error) {
	if len(data) < 16 || data[:4] != magic {
		return nil, errors.New("not a tkt1 table")
	}
	n, nslots, arena := uint64(le32(data, 1)), uint64(le32(data, 2)), uint64(le32(data, 3))
	if nslots == 0 || nslots&(nslots-1) != 0 || uint64(len(data)) != 16+4*(n+1+nslots+256)+arena {
		return nil, fmt.Errorf("table sizes %d/%d/%d do not add up to %d bytes", n, nslots, arena, len(data))
	}
	t := &table{mask: nslots - 1}
	at := uint64(16)
	t.off, at = data[at:at+4*(n+1)], at+4*(n+1)
	t.slots, at = data[at:at+4*nslots], at+4*nslots
	for b := range t.byte1 {
		t.byte1[b] = le32(data[at:], uint64(b))
	}
	t.arena = data[at+4*256:]
	if uint64(le32(t.off, n)) != arena {
		return nil, errors.New("token offsets do not end at the arena's end")
	}
	return t, nil
}

// rank is the rank of token b, if it is one.
func (t *table) rank(b string) (uint32, bool) {
	if len(b) == 1 {
		return t.byte1[b[0]], true
	}
	h := hash(b) & t.mask
	for {
		s := le32(t.slots, h)
		if s == 0 {
			return 0, false
		}
		r := uint64(s - 1)
		if t.arena[le32(t.off, r):le32(t.off, r+1)] == b {
			return uint32(r), true
		}
		h = (h + 1) & t.mask
	}
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

// buildTable builds the embedded form of a .tiktoken rank file: one
// "base64 rank" line per token, ranks in order from 0, every single byte a
// token. Anything else is an error naming the line.
func buildTable(data []byte) ([]byte, error) {
	arena := make([]byte, 0, len(data)*3/4)
	off := []uint32{0}
	var byte1 [256]uint32
	for line := 1; len(data) > 0; line++ {
		var l []byte
		l, data = cut(data)
		r := len(off) - 1
		sp := bytes.IndexByte(l, ' ')
		rank, ok := 0, sp > 0 && sp < len(l)-1
		for _, d := range l[sp+1:] {
			if d < '0' || d > '9' {
				ok = false
				break
			}
			rank = rank*10 + int(d-'0')
		}
		if !ok || rank != r {
			return nil, fmt.Errorf("line %d: want %q's rank to be %d", line, l, r)
		}
		tok := make([]byte, decodedLen(l[:sp]))
		n, err := base64.StdEncoding.Decode(tok, l[:sp])
		if err != nil || n == 0 || n != len(tok) {
			return nil, fmt.Errorf("line %d: bad token %q", line, l[:sp])
		}
		arena = append(arena, tok...)
		off = append(off, uint32(len(arena)))
		if n == 1 {
			byte1[tok[0]] = uint32(r) + 1
		}
	}
	for b, r := range byte1 {
		if r == 0 {
			return nil, fmt.Errorf("no token for byte %#x", b)
		}
		byte1[b] = r - 1
	}
	n := len(off) - 1
	// At most half full: linear probing then takes about 1.5 probes to
	// find a token and 2.5 to miss.
	nslots := uint64(1) << bits.Len64(uint64(n)*2)
	slots := make([]uint32, nslots)
	for r := range n {
		h := hash(string(arena[off[r]:off[r+1]])) & (nslots - 1)
		for slots[h] != 0 {
			h = (h + 1) & (nslots - 1)
		}
		slots[h] = uint32(r) + 1
	}
	out := make([]byte, 0, 16+4*(len(off)+len(slots)+256)+len(arena))
	out = append(out, magic...)
	for _, x := range []uint32{uint32(n), uint32(nslots), uint32(len(arena))} {
		out = binary.LittleEndian.AppendUint32(out, x)
	}
	for _, xs := range [][]uint32{off, slots, byte1[:]} {
		for _, x := range xs {
			out = binary.LittleEndian.AppendUint32(out, x)
		}
	}
	return append(out, arena...), nil
}

package traces

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// Hash is the block's content identity: equal blocks hash equal, whatever
// session or position they come from. Token counts are memoized on it.
func (b *Block) Hash() uint64 {
	d := xxhash.New()
	d.WriteString(string(b.Kind))
	d.Write([]byte{0})
	d.WriteString(b.ID)
	d.Write([]byte{0})
	d.WriteString(b.Name)
	d.Write([]byte{0})
	d.WriteString(b.Input)
	d.Write([]byte{0})
	d.WriteString(b.Text)
	d.Write([]byte{0})
	if b.Tokens != 0 || b.ScaffoldEnd != 0 || b.IsError {
		d.WriteString(strconv.Itoa(b.Tokens))
		d.Write([]byte{0})
		d.WriteString(strconv.Itoa(b.ScaffoldEnd))
		if b.IsError {
			d.Write([]byte{1})
		}
	}
	return d.Sum64()
}

// HashString is the xxhash of s, for callers that key on text alone.
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

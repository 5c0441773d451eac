package estimate

import (
	"sync"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// sizedMinBytes is the shortest text RoughSizes keeps: below it a pass over
// the text costs less than the locked lookup.
const sizedMinBytes = 256

// RoughSizes memoizes the rough rules' per-block sizes under the block's
// content hash, so that the rough estimator, the compressor's MsgBudget
// and every replay of the same sessions size each distinct block's text
// once, as a Memo tokenizes it once. Each value is a pure function of the
// block, so sizes are the same with or without one. One may be shared by
// every estimator of a process; it is safe for concurrent use. The zero
// value is ready; a nil *RoughSizes keeps nothing and computes every size.
type RoughSizes struct {
	mu sync.RWMutex
	m  map[uint64]int // by sizeKey
}

// A sizeFn is one of the rough rules' functions of a block's text.
type sizeFn uint8

const (
	fnText sizeFn = iota // Rough(b.Text)
	fnTool               // RoughTool(b)
	fnCall               // Rough(b.Name) + Rough(b.Input)
)

// sizeKey is the key of f of a block with hash h: the hash with f's salt
// mixed in, one word, so a lookup takes the map's fast path. Keys of two
// functions meet only as two block hashes collide do.
func sizeKey(h uint64, f sizeFn) uint64 {
	return h ^ [...]uint64{0, 0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f}[f]
}

func (f sizeFn) of(b *traces.Block) int {
	switch f {
	case fnTool:
		return RoughTool(b)
	case fnCall:
		return Rough(b.Name) + Rough(b.Input)
	}
	return Rough(b.Text)
}

func (f sizeFn) bytes(b *traces.Block) int {
	switch f {
	case fnTool:
		return len(b.Name) + len(b.Text) + len(b.Input)
	case fnCall:
		return len(b.Name) + len(b.Input)
	}
	return len(b.Text)
}

// size is f of b, kept under b's hash h (0: not known yet) when the text is
// long enough.
func (s *RoughSizes) size(b *traces.Block, h uint64, f sizeFn) int {
	if s == nil || f.bytes(b) < sizedMinBytes {
		return f.of(b)
	}
	if h == 0 {
		h = b.Hash()
	}
	return s.keyed(sizeKey(h, f), func() int { return f.of(b) })
}

// keyed is the size kept under k, computed by size on a miss.
func (s *RoughSizes) keyed(k uint64, size func() int) int {
	s.mu.RLock()
	n, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return n
	}
	n = size()
	s.mu.Lock()
	if s.m == nil {
		s.m = map[uint64]int{}
	}
	s.m[k] = n
	s.mu.Unlock()
	return n
}

// Block is RoughBlock(b); h is b.Hash(), or 0 when the caller does not
// have it.
func (s *RoughSizes) Block(b *traces.Block, h uint64) int {
	switch {
	case b.Opaque():
		return b.Tokens
	case b.Kind == traces.ToolSchema:
		return s.size(b, h, fnTool)
	case b.Kind == traces.Image:
		return ImageTokens
	case b.Kind == traces.ToolUse:
		return s.size(b, h, fnCall)
	}
	return s.size(b, h, fnText)
}

// blockHash is m's hash of block j when s keeps sizes, else 0 (not needed).
func (s *RoughSizes) blockHash(m *prompt.Message, j int) uint64 {
	if s == nil {
		return 0
	}
	return m.BlockHash(j)
}

// Message is RoughMessage(m), with the block hashes m keeps; a long
// message's is kept under its own hash, one lookup where its blocks' are
// one each.
func (s *RoughSizes) Message(m *prompt.Message) int {
	return s.perMessage(m, msgSalt, s.message)
}

// perMessage is f(m), kept under m's hash salted with salt when m is long
// enough for one lookup to beat sizing it block by block.
func (s *RoughSizes) perMessage(m *prompt.Message, salt uint64, f func(*prompt.Message) int) int {
	if s == nil || textBytes(m) < sizedMinBytes {
		return f(m)
	}
	return s.keyed(m.Hash()^salt, func() int { return f(m) })
}

func (s *RoughSizes) message(m *prompt.Message) int {
	n := 0
	for j := range m.Blocks {
		n += s.Block(&m.Blocks[j], s.blockHash(m, j))
	}
	return n
}

// Salts of the per-message keys: a message's hash and a block's meet
// only as two hashes collide.
const (
	msgSalt    = 0x94d049bb133111eb
	budgetSalt = 0xbf58476d1ce4e5b9
)

// textBytes is the length of m's blocks' text, inputs and names: what
// sizing it reads.
func textBytes(m *prompt.Message) int {
	n := 0
	for j := range m.Blocks {
		b := &m.Blocks[j]
		n += len(b.Text) + len(b.Input) + len(b.Name)
	}
	return n
}

// Budget is MsgBudget(m), with the block hashes m keeps; a long message's
// is kept under its own hash.
func (s *RoughSizes) Budget(m *prompt.Message) int {
	return s.perMessage(m, budgetSalt, s.budget)
}

func (s *RoughSizes) budget(m *prompt.Message) int {
	n := 10
	for j := range m.Blocks {
		b := &m.Blocks[j]
		switch {
		case b.Opaque():
			n += b.Tokens
		case b.Kind == traces.Image:
			n += BudgetImageTokens
		case b.Kind == traces.ToolUse:
			// {"id": "...", "type": "function", "function": {"name": "...", "arguments": "..."}}
			const wrap = 62
			n += (len(b.ID) + len(b.Name) + len(b.Input) + wrap + CharsPerToken - 1) / CharsPerToken
		default:
			n += s.size(b, s.blockHash(m, j), fnText)
		}
	}
	return n
}

// Floor is RoughFloor(v).
func (s *RoughSizes) Floor(v *prompt.View) int { return s.floorWith(v, nil) }

// floor is RoughFloor(v), hashing v's blocks through f (shared by the
// session's estimators) when they are needed.
func (s *RoughSizes) floor(v *prompt.View, f *FloorHashes) int {
	if s == nil || f == nil {
		return s.Floor(v)
	}
	return s.floorWith(v, f.Of(v))
}

package prompt

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/traces"
)

// Tag says what made a message of the view.
type Tag uint8

// Tags.
const (
	// Plain is a message projected from a transcript event as it was.
	Plain Tag = iota
	// BatchSummary is a batch compaction's summary marker.
	BatchSummary
	// MicroSummary is micro-compaction's rolling summary marker.
	MicroSummary
	// Edited is a transcript message a policy rewrote in place (pruned tool
	// output, a masked observation).
	Edited
	// Merged is user turns joined into one message, each turn's text kept
	// verbatim as one block (hermes' micro-compaction merges the user turns
	// a dropped marker leaves side by side). Event is the first turn's.
	Merged
)

// A Message is one entry of the view. Messages are immutable: a policy that
// changes one makes a new Message with NewMessage.
type Message struct {
	Role   Role
	Blocks []traces.Block
	// Event is the index of the transcript event this message projects, or
	// -1 when a policy made it.
	Event int
	Tag   Tag
	hash  uint64
	// blockHashes are the blocks' content hashes, which the Builder needs
	// again: hashing block text is most of the cost of a call.
	blockHashes []uint64
}

// NewMessage builds a message and its content hash.
func NewMessage(role Role, blocks []traces.Block, event int, tag Tag) Message {
	hs := make([]uint64, len(blocks))
	for i := range blocks {
		hs[i] = blocks[i].Hash()
	}
	return NewMessageHashed(role, blocks, hs, event, tag)
}

// NewMessageHashed is NewMessage for blocks whose hashes (Block.Hash, one
// per block) the caller already has: a replay hashes each event's blocks
// once per session, not once per policy. The message keeps hashes.
func NewMessageHashed(role Role, blocks []traces.Block, hashes []uint64, event int, tag Tag) Message {
	m := Message{Role: role, Blocks: blocks, Event: event, Tag: tag, blockHashes: hashes}
	d := xxhash.New()
	var buf [8]byte
	buf[0] = byte(role)
	d.Write(buf[:1])
	for _, h := range hashes {
		binary.LittleEndian.PutUint64(buf[:], h)
		d.Write(buf[:])
	}
	m.hash = d.Sum64()
	return m
}

// BlockHash is Blocks[j].Hash(), from the message's cache when it was made
// by NewMessage.
func (m *Message) BlockHash(j int) uint64 {
	if j < len(m.blockHashes) && len(m.blockHashes) == len(m.Blocks) {
		return m.blockHashes[j]
	}
	return m.Blocks[j].Hash()
}

// Hash is the message's content identity (role and blocks).
func (m *Message) Hash() uint64 {
	if m.hash == 0 {
		return NewMessage(m.Role, m.Blocks, m.Event, m.Tag).hash
	}
	return m.hash
}

// A View is the message list a harness would send now: the floor (tools,
// system) and the messages. Policies rewrite views; the transcript they were
// projected from never changes.
type View struct {
	Tools    []traces.Block
	System   []traces.Block
	Messages []Message
}

// Clone returns a view whose slices can be changed without touching v's.
// Messages themselves are shared: they are immutable.
func (v *View) Clone() *View {
	return &View{
		Tools:    append([]traces.Block(nil), v.Tools...),
		System:   append([]traces.Block(nil), v.System...),
		Messages: append([]Message(nil), v.Messages...),
	}
}

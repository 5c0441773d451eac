package prompt

import (
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
)

// Wire describes the provider-side rendering rules a Builder applies.
type Wire struct {
	// PerMessage is the framing cost of a message, charged to its first
	// block (role header and separators).
	PerMessage int
	// Tail is the framing after the last block that no breakpoint covers
	// (the turn-opening tokens of the reply).
	Tail int
	// StripStaleThinking drops thinking blocks of assistant messages that
	// come before the last plain user message, as the Anthropic API does when
	// extended thinking is on.
	StripStaleThinking bool
	// ThinkingByModel strips them only for the models whose API does
	// (StripsThinking): what the Anthropic API does by default.
	ThinkingByModel bool
	// SplitScaffolds renders a block with a registered ScaffoldEnd as two
	// blocks, the static scaffold (Scaffold set) and the volatile tail, so a
	// planner can mark the scaffold alone.
	SplitScaffolds bool
}

// A Counter sizes a block in tokens. It must be deterministic and should be
// memoized: it is called once per distinct block a Builder sees. h is
// b.Hash(), which the caller has already computed: hashing a block's text
// is most of what a call costs, so it is done once, where the block enters.
type Counter func(b *traces.Block, h uint64) int

type msgKey struct {
	hash  uint64
	stale bool
}

// A Builder turns views into requests. It remembers the last request so that
// the work of a Build is proportional to what changed since: messages of the
// common prefix are not re-hashed or re-counted.
type Builder struct {
	Count Counter
	Wire  Wire
	// Extra, when set, adds tokens to a message: a calibration's
	// correction that belongs to the message (what the provider billed
	// beyond the local count when the message was first sent), on its first
	// block, or spread over its blocks while it is negative (none goes
	// below zero). It is called once per message build.
	Extra func(m *Message) int
	// Floors, when set, hashes a new floor for this builder and whoever
	// shares it (the session's estimators), or has its hashes kept.
	Floors *FloorHashes
	// KeepThinking is a harness asking the Anthropic API to keep every
	// earlier thinking block (context_management's clear_thinking edit
	// with keep "all"): Wire.ThinkingByModel then strips none for a Claude
	// model. OpenAI's reasoning items are dropped regardless.
	KeepThinking bool

	floorKey uint64
	// tools and system are the floor of the last build. A floor equal to
	// them block for block has their floorKey: comparing is cheap where
	// hashing is not (the floor is tens of KB of text, and strings shared
	// with the last view compare by pointer).
	tools, system []traces.Block
	floorHashes   []uint64         // the floor's block hashes, by the last floorHash
	floorID       [2]*traces.Block // the last floor's first tool and system blocks
	keys          []msgKey         // per message of the last build
	starts        []int            // first block index of each message, len(keys)+1
	blocks        []Block
	split         map[uint64]*splitPair
	req           Request
	marks         [MaxBreakpoints]Breakpoint // req's breakpoints (see Request.Mark)
	// strips caches StripsThinking of the last model built for.
	stripModel string
	strips     bool
	turns      bool // the model is an OpenAI reasoning model (turns end at answers)
	// dropMsg is the first message of the last build a stale thinking
	// block was dropped from (-1: none), dropAt where (Request.StripAt).
	dropMsg, dropAt int
}

func (b *Builder) stripsThinking(model string) bool {
	if model != b.stripModel || b.stripModel == "" {
		b.stripModel, b.strips = model, StripsThinking(model)
		b.turns = openAIReasoning(strings.TrimPrefix(strings.ToLower(model), "openai/"))
	}
	return b.strips
}

// NewBuilder returns a builder with the given counter and wire rules.
func NewBuilder(count Counter, w Wire) *Builder {
	return &Builder{Count: count, Wire: w}
}

// sameFloor reports whether v's floor equals the last build's.
func (b *Builder) sameFloor(v *View) bool {
	return b.starts != nil && slices.Equal(v.Tools, b.tools) && slices.Equal(v.System, b.system)
}

// floorHash is the identity of v's floor; it keeps the blocks' hashes, tools
// then system, in b.floorHashes for the build that pushes them.
func (b *Builder) floorHash(v *View) uint64 {
	id := [2]*traces.Block{first(v.Tools), first(v.System)}
	if b.starts != nil && id == b.floorID {
		// The last build's slices, changed in place: what Floors keeps by
		// identity is stale, so hash them here and keep that.
		fresh := (*FloorHashes)(nil).Of(v)
		b.Floors.Keep(v, fresh)
		b.floorHashes = append(b.floorHashes[:0], fresh...)
	} else {
		b.floorHashes = append(b.floorHashes[:0], b.Floors.Of(v)...)
	}
	b.floorID = id
	var h uint64 = 0x9e3779b97f4a7c15
	for _, bh := range b.floorHashes[:len(v.Tools)] {
		h = chain(h, bh, RoleSystem, false)
	}
	h = chain(h, 1, RoleSystem, true)
	for _, bh := range b.floorHashes[len(v.Tools):] {
		h = chain(h, bh, RoleSystem, false)
	}
	return h
}

// push appends one block. extra is what is left of the message's
// calibration correction; the block takes what it can of it.
func (b *Builder) push(src *traces.Block, h uint64, sec Section, role Role, msg int, first, scaffold bool, extra *int) {
	prev, end := uint64(0), 0
	if n := len(b.blocks); n > 0 {
		prev, end = b.blocks[n-1].Chain, b.blocks[n-1].End
	}
	tok := b.Count(src, h)
	if first && sec == Messages {
		tok += b.Wire.PerMessage
	}
	if extra != nil && *extra != 0 {
		// A negative correction (a calibration finding the prompt smaller
		// than thought) takes blocks to zero, never below, the first
		// block first, then the next: positions in the prompt only grow,
		// so no cached prefix ends past the prompt. What the message
		// cannot absorb is the caller's to carry (see Extra).
		t := max(0, tok+*extra)
		*extra -= t - tok
		tok = t
	}
	cacheable := src.Kind != traces.Thinking && (src.Text != "" || src.Input != "" || src.Tokens > 0 || src.Kind == traces.ToolResultBlock)
	b.blocks = append(b.blocks, Block{
		Hash: h, Chain: chain(prev, h, role, first), End: end + tok, Tokens: tok,
		Msg: msg, Section: sec, Role: role, Kind: src.Kind, Cacheable: cacheable,
		Scaffold: scaffold, Src: src,
	})
}

// splitPair is a block cut at its scaffold's end, with the halves' hashes.
type splitPair struct {
	blocks [2]traces.Block
	hashes [2]uint64
}

// splitBlock is src, whose hash is h, cut at its scaffold's end; the halves
// are made and hashed once per distinct block.
func (b *Builder) splitBlock(src *traces.Block, h uint64) *splitPair {
	if p, ok := b.split[h]; ok {
		return p
	}
	if b.split == nil {
		b.split = map[uint64]*splitPair{}
	}
	head, tail := *src, *src
	head.Text, head.ScaffoldEnd = src.Text[:src.ScaffoldEnd], 0
	tail.Text, tail.ScaffoldEnd = src.Text[src.ScaffoldEnd:], 0
	p := &splitPair{blocks: [2]traces.Block{head, tail}, hashes: [2]uint64{head.Hash(), tail.Hash()}}
	b.split[h] = p
	return p
}

// Build renders v for model. output is the number of output tokens the call
// will produce. The returned request shares storage with b and is valid
// until the next Build.
func (b *Builder) Build(model string, v *View, output int) *Request {
	lastUser := -1
	turns := b.Wire.ThinkingByModel && b.stripsThinking(model) && b.turns
	if b.Wire.StripStaleThinking || (b.Wire.ThinkingByModel && b.stripsThinking(model) && (turns || !b.KeepThinking)) {
		for i := len(v.Messages) - 1; i >= 0; i-- {
			if v.Messages[i].Role == RoleUser && (!turns || answered(v.Messages, i)) {
				lastUser = i
				break
			}
		}
	}
	// Find the common prefix with the last build. Its keys stay as they
	// are; only those of the messages after it are written.
	k := 0
	same := b.sameFloor(v)
	if !same {
		// The floor is copied (its strings are shared), so a caller that
		// changes its slices in place cannot change what we compare with.
		b.tools = append(b.tools[:0], v.Tools...)
		b.system = append(b.system[:0], v.System...)
		fk := b.floorHash(v)
		same = b.starts != nil && fk == b.floorKey // an equal floor in new slices
		b.floorKey = fk
	}
	if same {
		for n := min(len(v.Messages), len(b.keys)); k < n && b.keys[k] == (msgKey{hash: v.Messages[k].Hash(), stale: k < lastUser}); k++ {
		}
	} else {
		// A new floor: floorHash ran above and kept its blocks' hashes.
		b.blocks = b.blocks[:0]
		for i := range v.Tools {
			b.push(&v.Tools[i], b.floorHashes[i], Tools, RoleSystem, -1, false, false, nil)
		}
		for i := range v.System {
			b.push(&v.System[i], b.floorHashes[len(v.Tools)+i], System, RoleSystem, -1, i == 0, false, nil)
		}
		b.starts = append(b.starts[:0], len(b.blocks))
	}
	b.blocks = b.blocks[:b.starts[k]]
	b.starts = b.starts[:k+1]
	b.keys = b.keys[:k]
	if b.dropMsg >= k || k == 0 {
		b.dropMsg = -1
	}
	for i := k; i < len(v.Messages); i++ {
		m := &v.Messages[i]
		stale := i < lastUser
		b.keys = append(b.keys, msgKey{hash: m.Hash(), stale: stale})
		first := true
		extra := 0
		if b.Extra != nil {
			extra = b.Extra(m)
		}
		for j := range m.Blocks {
			src := &m.Blocks[j]
			if stale && m.Role == RoleAssistant && src.Kind == traces.Thinking {
				if b.dropMsg < 0 {
					b.dropMsg, b.dropAt = i, 0
					if n := len(b.blocks); n > 0 {
						b.dropAt = b.blocks[n-1].End
					}
				}
				continue
			}
			if b.Wire.SplitScaffolds && src.ScaffoldEnd > 0 && src.ScaffoldEnd < len(src.Text) {
				p := b.splitBlock(src, m.BlockHash(j))
				b.push(&p.blocks[0], p.hashes[0], Messages, m.Role, i, first, true, &extra)
				b.push(&p.blocks[1], p.hashes[1], Messages, m.Role, i, false, false, &extra)
				first = false
				continue
			}
			b.push(src, m.BlockHash(j), Messages, m.Role, i, first, false, &extra)
			first = false
		}
		b.starts = append(b.starts, len(b.blocks))
	}
	total := 0
	if n := len(b.blocks); n > 0 {
		total = b.blocks[n-1].End
	}
	b.req = Request{Model: model, Blocks: b.blocks, Total: total + b.Wire.Tail, Output: output, marks: &b.marks}
	if b.dropMsg >= 0 {
		b.req.StripAt = max(1, b.dropAt)
	}
	return &b.req
}

// Grow makes room for n blocks in the requests b builds, so that a session
// whose size is known does not grow them block by block.
func (b *Builder) Grow(n int) {
	if n > len(b.blocks) {
		b.blocks = slices.Grow(b.blocks, n-len(b.blocks))
	}
}

// Reset forgets the last build, so the next Build starts from scratch.
func (b *Builder) Reset() {
	b.starts, b.keys, b.blocks = nil, nil, b.blocks[:0]
	b.tools, b.system = b.tools[:0], b.system[:0]
}

// answered reports whether the user message at i starts a new turn for
// OpenAI's reasoning models: the turn before it ended with an answer (its
// last assistant message calls no tool). The Responses API drops the
// reasoning of answered turns; a turn the person interrupted mid tool call
// keeps its reasoning at the next message (corpus anmol0b/Trezo-Ai
// ff1815ba: after an aborted turn the next call reads all 50,048 tokens of
// the previous prompt and grows by what was added, reasoning kept; in
// 1bf566ba, after an answer, the previous call's 57 reasoning tokens are
// gone).
func answered(msgs []Message, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if msgs[j].Role != RoleAssistant {
			continue
		}
		for k := range msgs[j].Blocks {
			if msgs[j].Blocks[k].Kind == traces.ToolUse {
				return false
			}
		}
		return true
	}
	return true
}

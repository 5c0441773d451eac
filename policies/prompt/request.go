package prompt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/traces"
)

// TTL is a cache breakpoint's lifetime tier.
type TTL uint8

// TTL tiers. NoCache marks nothing.
const (
	NoCache TTL = iota
	TTL5m
	TTL1h
)

func (t TTL) String() string {
	switch t {
	case TTL5m:
		return "5m"
	case TTL1h:
		return "1h"
	}
	return "none"
}

// Duration is how long an entry written or refreshed with this tier lives.
func (t TTL) Duration() time.Duration {
	switch t {
	case TTL5m:
		return 5 * time.Minute
	case TTL1h:
		return time.Hour
	}
	return 0
}

// ParseTTL reads "5m" or "1h".
func ParseTTL(s string) (TTL, error) {
	switch s {
	case "5m":
		return TTL5m, nil
	case "1h":
		return TTL1h, nil
	}
	return NoCache, fmt.Errorf("prompt: ttl %q: want 5m or 1h", s)
}

// Section is the part of the prompt a block belongs to, in the order the
// provider renders them.
type Section uint8

// Sections.
const (
	Tools Section = iota
	System
	Messages
)

// Role is a message's role in the view. Tool is a user-role message carrying
// only tool results (hermes' role:tool rows; one user message on the
// Anthropic wire).
type Role uint8

// Roles.
const (
	RoleSystem Role = iota
	RoleUser
	RoleAssistant
	RoleTool
)

func (r Role) String() string {
	return [...]string{"system", "user", "assistant", "tool"}[r]
}

// A Block is one content block as the provider sees it, with everything the
// cache needs precomputed: its content hash, the hash chain of the whole
// prefix through it, and the prompt size through its end.
type Block struct {
	Hash  uint64 // content identity of the block (with its role)
	Chain uint64 // identity of the whole prefix through this block
	// End is the prompt size in tokens from the start of the request through
	// the end of this block.
	End     int
	Tokens  int
	Msg     int // index of the message in the view, -1 for tools and system
	Section Section
	Role    Role
	Kind    traces.BlockKind
	// Cacheable reports whether the block may carry cache_control (thinking
	// blocks and empty text may not).
	Cacheable bool
	// Scaffold reports that the block is a registered static scaffold: the
	// first part of a message whose builder said where its stable part ends.
	Scaffold bool
	// Src is the content; nil for synthetic size-only blocks.
	Src *traces.Block
}

// A Breakpoint is a cache_control mark on Blocks[Block].
type Breakpoint struct {
	Block int
	TTL   TTL
}

// MaxBreakpoints is the Anthropic limit per request.
const MaxBreakpoints = 4

// A Request is one model call as the provider receives it. It is built by a
// Builder, marked by a cache planner, then frozen; the provider checks that
// nothing changed it after the planner ran.
//
// Blocks may share storage with the Builder that made it: a Request is valid
// until that Builder's next Build.
type Request struct {
	Model string
	// Key names the conversation the request belongs to (the session id),
	// as OpenAI's prompt_cache_key does. Providers use it to tell one
	// conversation's calls from another's on a shared account (routing,
	// miss attribution), never to match a cached prefix.
	Key string
	// RouteKey is OpenAI's prompt_cache_key exactly as the request sent it,
	// when the replay knows it (a capture; empty otherwise). The API routes
	// a request to a machine by its prefix and this key, and a machine's
	// cache holds what it served, so the OpenAI provider serves a keyed
	// request only what requests with the same key wrote.
	RouteKey string
	Blocks   []Block
	// Total is the whole prompt size: the last block's End plus framing the
	// provider adds after it, which no breakpoint can cover.
	Total int
	// Output is the number of output tokens the call produces (in replay,
	// what was recorded).
	Output      int
	Breakpoints []Breakpoint
	// ReadLimit, when Limited, is the last block whose cached prefix the
	// provider may serve (-1: none). It is an observation, not a choice:
	// replaying a log whose billed read collapsed to an earlier breakpoint
	// with nothing in the transcript to explain it (a re-send), the
	// replay makes the provider do what the bill shows it did.
	ReadLimit int
	Limited   bool
	// ReadTokens, when positive with Limited or KeptAlive, is the read the
	// log shows, in prompt tokens: a cache that counts tokens (OpenAI's)
	// serves no more, and serves that much when it ended inside the block
	// after ReadLimit (a request routed to a machine that held only part of
	// the opaque floor reads 2,432 or 9,600 tokens of it: corpus
	// kunalcode12 019db6d2). Anthropic's serves that much when a
	// re-send's read ended inside the floor block after ReadLimit (one the
	// replay holds whole where the request had boundaries: an inferred
	// floor), and otherwise serves the entry at ReadLimit.
	ReadTokens int
	// ReadInside says ReadTokens ended inside a floor block the replay
	// holds whole where the request had boundaries (InsideFloor): the
	// block after ReadLimit for a re-send, the block KeepAlive revives
	// for a read past the TTL. Anthropic's provider serves ReadTokens of
	// it and writes the rest again (a revived block only when it was
	// revived). A replay of a tape, whose blocks carry no sections, is
	// given it.
	ReadInside bool
	// KeepAlive, when KeptAlive, is the last block of a prefix the provider
	// serves from cache even if nothing this replay sent kept it alive: the
	// log shows a read after a gap longer than the TTL, so a request the
	// log does not show (or the provider's slack past the TTL) kept it.
	// Also an observation, the mirror of ReadLimit.
	KeepAlive int
	KeptAlive bool
	// Generated, when positive, is the first block of the conversation's
	// previous call's output, sent back as that call generated it
	// (nothing of it dropped), right after that call's prompt. A cache
	// that keeps what a model generated with its prompt (OpenAI's
	// in-memory retention) reads into it.
	Generated int
	// Started, when positive, is how long after the request was sent its
	// response began, as a recorded log shows it (the logged first content
	// block, less its decoding): the provider makes what the request writes
	// readable, and starts its TTL, then, instead of after its latency
	// model's TTFT. An observation like KeepAlive; 0 leaves timing to the
	// model.
	Started time.Duration
	// StripAt, when positive, is where the first thinking block the
	// request dropped would have been (the tokens before it): the prefix
	// a cache kept for the last call, which sent that block, ends there at
	// most. A bill that reads past it says the harness kept earlier
	// thinking (Builder.KeepThinking).
	StripAt int
	// Automatic, unless NoCache, is a top-level cache_control with that
	// TTL: Anthropic's automatic mode, which puts a breakpoint on the last
	// cacheable block and takes one of the MaxBreakpoints slots
	// (reference/providers.md §1.1 and §8, the Claude cookbook as quoted in
	// opencodex PR #4437). The provider resolves it; Breakpoints holds the
	// explicit marks only.
	Automatic TTL
	// Window is the context window the harness asked for: 0 or the
	// model's default window, or more with the 1M-context option (the
	// context-1m beta, Claude Code's "[1m]" models). The provider accepts
	// up to the larger of it and the model's default, within the model's
	// MaxWindow.
	Window int
	// Sent are the cache_control marks the harness itself put on this
	// request, when it is replayed from a capture of what was sent
	// (block, TTL); the as-sent planner marks exactly these.
	Sent []Breakpoint
	// Params are the request-level settings the Anthropic cache keys on
	// besides the blocks themselves (reference/providers.md §1.2). The
	// zero value is the API's default: tool_choice auto, thinking off, no
	// web search, no citations.
	Params   Params
	frozen   uint64
	isFrozen bool
	// marks, when set, is where Mark starts Breakpoints: the Builder's,
	// so that marking a request allocates nothing.
	marks *[MaxBreakpoints]Breakpoint
}

// Params are the request settings outside the content blocks that
// invalidate part of the Anthropic cache when they change, per the
// prompt-caching page's "What invalidates the cache" table
// (reference/providers.md §1.2): a change of ToolChoice or Thinking
// invalidates the messages cache; toggling WebSearch or Citations
// invalidates the system and messages caches. The tools cache survives
// all of them. Images need no field: adding or removing one changes the
// blocks, which the hash chain already sees (see sim/provider's
// TestAnthropicInvalidation for why an image appended at the end does not
// invalidate the earlier messages).
type Params struct {
	// ToolChoice is the tool_choice setting as sent ("" is auto).
	ToolChoice string
	// Thinking is the thinking setting as sent: "" for off, else its type
	// and budget (e.g. "enabled:16000", "adaptive").
	Thinking string
	// WebSearch and Citations say whether the web search tool and
	// citations are on.
	WebSearch, Citations bool
}

// Mark adds a breakpoint on block i. It panics after Freeze: a broken
// invariant of the engine, not bad input.
func (r *Request) Mark(i int, ttl TTL) {
	if r.isFrozen {
		panic("prompt: Mark on a frozen request")
	}
	if r.Breakpoints == nil && r.marks != nil {
		r.Breakpoints = r.marks[:0]
	}
	r.Breakpoints = append(r.Breakpoints, Breakpoint{Block: i, TTL: ttl})
}

func (r *Request) fingerprint() uint64 {
	var buf [8]byte
	d := xxhash.New()
	d.WriteString(r.Model)
	for _, v := range []int{len(r.Blocks), r.Total, r.Output, len(r.Breakpoints)} {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		d.Write(buf[:])
	}
	if n := len(r.Blocks); n > 0 {
		binary.LittleEndian.PutUint64(buf[:], r.Blocks[n-1].Chain)
		d.Write(buf[:])
	}
	for _, bp := range r.Breakpoints {
		binary.LittleEndian.PutUint64(buf[:], uint64(bp.Block)<<8|uint64(bp.TTL))
		d.Write(buf[:])
	}
	d.Write([]byte{byte(r.Automatic)})
	d.WriteString(r.Params.ToolChoice)
	d.WriteString("\x00")
	d.WriteString(r.Params.Thinking)
	buf[0], buf[1] = 0, 0
	if r.Params.WebSearch {
		buf[0] = 1
	}
	if r.Params.Citations {
		buf[1] = 1
	}
	d.Write(buf[:2])
	return d.Sum64()
}

// InsideFloor reports whether r's observed read (ReadTokens) ended
// inside a floor block: the one after ReadLimit for a re-send, the one
// KeepAlive revives for a read past the TTL (see ReadInside).
func (r *Request) InsideFloor() bool {
	k := -1
	switch {
	case r.Limited:
		k = r.ReadLimit + 1
	case r.KeptAlive:
		k = r.KeepAlive
	}
	if k < 0 || k >= len(r.Blocks) || r.Blocks[k].Section == Messages {
		return false
	}
	lo := 0
	if k > 0 {
		lo = r.Blocks[k-1].End
	}
	return r.ReadTokens > lo && r.ReadTokens < r.Blocks[k].End
}

// Freeze fixes the request after planning.
func (r *Request) Freeze() {
	r.frozen = r.fingerprint()
	r.isFrozen = true
}

// ErrChanged reports a request changed after Freeze.
var ErrChanged = errors.New("prompt: request changed after the cache planner ran")

// CheckFrozen returns ErrChanged if the request was changed since Freeze.
func (r *Request) CheckFrozen() error {
	if !r.isFrozen || r.frozen != r.fingerprint() {
		return ErrChanged
	}
	return nil
}

// Prefix returns the number of leading blocks whose Chain equals the
// corresponding block of o: the length of the common prefix.
func (r *Request) Prefix(o *Request) int {
	n := min(len(r.Blocks), len(o.Blocks))
	for i := 0; i < n; i++ {
		if r.Blocks[i].Chain != o.Blocks[i].Chain {
			return i
		}
	}
	return n
}

func chain(prev, h uint64, role Role, first bool) uint64 {
	var buf [18]byte
	binary.LittleEndian.PutUint64(buf[0:], prev)
	binary.LittleEndian.PutUint64(buf[8:], h)
	buf[16] = byte(role)
	if first {
		buf[17] = 1
	}
	return xxhash.Sum64(buf[:])
}

package estimate

import (
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// An Estimator sizes the prompt a view would make, before it is sent.
type Estimator interface {
	// Name identifies the estimator in records ("rough", "exact", ...).
	Name() string
	// Estimate is the prompt size of v in tokens.
	Estimate(v *prompt.View) int
}

// An Estimate is one estimator's reading of a prompt, reported next to the
// billed size so its error can be measured.
type Estimate struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// msgCache memoizes per-message sizes under the message's content hash,
// which a Message computes once: an estimate of a view costs one map lookup
// per message, not a pass over its text.
type msgCache map[uint64]int

func (c msgCache) get(m *prompt.Message, size func(*prompt.Message) int) int {
	h := m.Hash()
	if n, ok := c[h]; ok {
		return n
	}
	n := size(m)
	c[h] = n
	return n
}

// RoughEstimator is hermes' estimate_request_tokens_rough: system + messages
// + tool schemas with the Rough rules. It is not safe for concurrent use
// (one per session).
type RoughEstimator struct{ cache msgCache }

// NewRough returns a rough estimator.
func NewRough() *RoughEstimator { return &RoughEstimator{cache: msgCache{}} }

// Name is "rough".
func (*RoughEstimator) Name() string { return "rough" }

// Estimate sums the floor and every message.
func (e *RoughEstimator) Estimate(v *prompt.View) int {
	n := RoughFloor(v)
	for i := range v.Messages {
		n += e.cache.get(&v.Messages[i], RoughMessage)
	}
	return n
}

// Messages is the rough size of v's messages alone.
func (e *RoughEstimator) Messages(msgs []prompt.Message) int {
	n := 0
	for i := range msgs {
		n += e.cache.get(&msgs[i], RoughMessage)
	}
	return n
}

// RoughFloor is the rough size of the tool schemas and the system prompt.
func RoughFloor(v *prompt.View) int {
	n := 0
	for i := range v.Tools {
		n += RoughTool(&v.Tools[i])
	}
	for i := range v.System {
		n += RoughBlock(&v.System[i])
	}
	return n
}

// ExactEstimator counts with a tokenizer through a Memo, plus the wire's
// per-message framing. With the tokenizer a provider really uses it equals
// the billed prompt up to framing; with a stand-in (o200k for Claude) its
// error is the tokenizer's.
type ExactEstimator struct {
	Memo *Memo
	// PerMessage is the framing charged per message (prompt.Wire.PerMessage).
	PerMessage int
	cache      msgCache
}

// NewExact returns an exact estimator over memo.
func NewExact(memo *Memo, perMessage int) *ExactEstimator {
	return &ExactEstimator{Memo: memo, PerMessage: perMessage, cache: msgCache{}}
}

// Name is "exact".
func (*ExactEstimator) Name() string { return "exact" }

// Estimate counts the floor and every message.
func (e *ExactEstimator) Estimate(v *prompt.View) int {
	n := 0
	for i := range v.Tools {
		n += e.Memo.Count(&v.Tools[i])
	}
	for i := range v.System {
		n += e.Memo.Count(&v.System[i])
	}
	size := func(m *prompt.Message) int {
		s := e.PerMessage
		for j := range m.Blocks {
			s += e.count(&m.Blocks[j])
		}
		return s
	}
	for i := range v.Messages {
		n += e.cache.get(&v.Messages[i], size)
	}
	return n
}

func (e *ExactEstimator) count(b *traces.Block) int {
	if b.Kind == traces.Image && !b.Opaque() {
		return ImageTokens
	}
	return e.Memo.Count(b)
}

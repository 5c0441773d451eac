package estimate

import (
	"encoding/binary"
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// An Anchor is hermes' usage anchor: the billed prompt of the last response
// whose prompt fit, with the rough size and fingerprint of the view that
// produced it.
type Anchor struct {
	Model  string
	Billed int // the provider's prompt tokens
	Rough  int // the base estimator's size of the same view
	Count  int // messages in that view
	// Prefix fingerprints the floor and the Count messages: a rewrite of
	// anything already billed (compaction, prune, masking, an edit) changes it.
	Prefix uint64
}

// Calibrated is the calibrated projection (hermes agent/usage_anchor.py):
// the provider's billed prompt is the only authoritative size, so a
// projection is
//
//	billed + max(0, base_now − base_at_anchor)
//
// where base is a local estimator covering only what was appended since the
// anchor. It fails closed: when the already-billed prefix was rewritten or
// the model changed, the anchor does not match and the projection is the
// base estimate, flagged as unanchored.
//
// Simplification: hermes adds completion_tokens for the assistant reply and
// skips that row in the delta; we take the reply's rough size instead, so a
// reply whose rough size differs from its output tokens shifts the
// projection by that difference.
type Calibrated struct {
	Base   *RoughEstimator
	anchor Anchor
	has    bool

	floorKey  floorKey
	floorHash uint64
	lastKey   viewKey // the last prefix fingerprinted, by identity
	lastHash  uint64
	// known is the messages of the last view fingerprinted, by content
	// hash, and chain[i] the fingerprint of the floor and hashes[:i]: the
	// next fingerprint chains only the messages after the common prefix.
	known
	chain []uint64
}

// NewCalibrated returns a calibrated projection over base.
func NewCalibrated(base *RoughEstimator) *Calibrated { return &Calibrated{Base: base} }

// Name is "calibrated".
func (*Calibrated) Name() string { return "calibrated" }

// Capture re-anchors on a response: v is the view that was sent and billed
// its billed prompt size. A reading ≤ 0 (an endpoint that omits usage) keeps
// the old anchor. It reports whether the anchor was taken.
func (c *Calibrated) Capture(model string, v *prompt.View, billed int) bool {
	if billed <= 0 {
		return false
	}
	c.anchor = Anchor{
		Model: model, Billed: billed, Rough: c.Base.Estimate(v),
		Count: len(v.Messages), Prefix: c.fingerprint(v, len(v.Messages)),
	}
	c.has = true
	return true
}

// Clear drops the anchor (compaction, session reset, restart).
func (c *Calibrated) Clear() { c.has = false }

// Anchor returns the current anchor and whether one is held.
func (c *Calibrated) Anchor() (Anchor, bool) { return c.anchor, c.has }

// Matches reports whether the anchor still describes a prefix of v.
func (c *Calibrated) Matches(model string, v *prompt.View) bool {
	a := c.anchor
	return c.has && a.Model == model && a.Count <= len(v.Messages) && c.fingerprint(v, a.Count) == a.Prefix
}

// Project is the calibrated size of v and whether an anchor backed it.
func (c *Calibrated) Project(model string, v *prompt.View) (tokens int, anchored bool) {
	now := c.Base.Estimate(v)
	if !c.Matches(model, v) {
		return now, false
	}
	return c.anchor.Billed + max(0, now-c.anchor.Rough), true
}

// Estimate is Project for a view of the anchor's model; it satisfies
// Estimator.
func (c *Calibrated) Estimate(v *prompt.View) int {
	n, _ := c.Project(c.anchor.Model, v)
	return n
}

// fingerprint identifies the floor of v and its first n messages, with the
// floor's hash kept between calls.
func (c *Calibrated) fingerprint(v *prompt.View, n int) uint64 {
	k := viewKeyOf(v)
	if k.n = n; n > 0 && n <= len(v.Messages) {
		k.last = v.Messages[n-1].Hash()
	}
	if k == c.lastKey && k.msgs != nil && k.floor != (floorKey{}) {
		return c.lastHash
	}
	if k.floor != c.floorKey || k.floor == (floorKey{}) || len(c.chain) == 0 {
		c.floorKey, c.floorHash = k.floor, floorHash(v, c.Base.Floors.Of(v))
		c.hashes, c.chain = c.hashes[:0], append(c.chain[:0], c.floorHash)
	}
	n = min(n, len(v.Messages))
	i := c.common(v.Messages, n)
	c.keep(v.Messages, i)
	c.chain = c.chain[:i+1]
	for ; i < n; i++ {
		h := v.Messages[i].Hash()
		c.hashes = append(c.hashes, h)
		c.chain = append(c.chain, chainHash(c.chain[i], h))
	}
	c.lastKey, c.lastHash = k, c.chain[n]
	return c.lastHash
}

// chainHash extends fingerprint fp by a message's hash h (a 128-bit
// multiply folded, as wyhash mixes).
func chainHash(fp, h uint64) uint64 {
	hi, lo := bits.Mul64(fp^0xa0761d6478bd642f, h^0xe7037ed1a0b428db)
	return hi ^ lo
}

// floorHash identifies v's floor from its blocks' hashes hs (tools, then
// system).
func floorHash(v *prompt.View, hs []uint64) uint64 {
	d := xxhash.New()
	var buf [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		d.Write(buf[:])
	}
	for i := range v.Tools {
		put(hs[i])
	}
	put(1)
	for i := range v.System {
		put(hs[len(v.Tools)+i])
	}
	return d.Sum64()
}

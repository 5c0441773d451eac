package runner

import (
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
)

// A Variant is a what-if counterfactual: the recorded session with one
// thing changed, a config applied on top of the recorded policy.
type Variant struct {
	Name, Help string
	// TTL overrides the recorded cache tier ("" keeps it).
	TTL   string
	apply func(c *policies.Config)
}

var variants = []Variant{
	{"ttl-5m", "the recorded session with every breakpoint on the 5m tier", "5m", nil},
	{"ttl-1h", "the recorded session with every breakpoint on the 1h tier", "1h", nil},
	{"ttl-auto", "hermes' auto tier: 1h for human-paced sessions, 5m for subagents and jobs", "auto", nil},
	{"prune-on-resume", "plus a deterministic prune of old tool output on a resume whose cache expired anyway", "", func(c *policies.Config) {
		c.Compact.IdleCompactAfterSeconds = 300
		c.Compact.IdleAction = compact.IdlePrune
	}},
	{"micro-1", "plus hermes micro-compaction after every turn", "", func(c *policies.Config) {
		c.Compact.MicroCompact = true
		c.Compact.MicroCompactEveryNTurns = 1
	}},
	{"micro-5", "plus hermes micro-compaction every 5 turns", "", func(c *policies.Config) {
		c.Compact.MicroCompact = true
		c.Compact.MicroCompactEveryNTurns = 5
	}},
	{"masking", "plus observation masking: the last 10 tool outputs verbatim, older ones a placeholder (batched, ≥4096 tokens a pass)", "", func(c *policies.Config) {
		c.Compact.Masking.Mode = compact.MaskBatched
	}},
}

// Variants are the default what-if counterfactuals, in display order.
func Variants() []Variant { return append([]Variant(nil), variants...) }

// LookupVariant finds a variant by name.
func LookupVariant(name string) (Variant, bool) {
	for _, v := range variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// Policy is the variant as a policy to replay. Its Config starts from
// policies.Default() with compaction off (the recorded compactions stay)
// and may be changed further (overrides) before it is replayed.
func (v Variant) Policy() Policy {
	c := policies.Default()
	c.Name = v.Name
	c.Compact.Enabled = false
	if v.apply != nil {
		v.apply(&c)
	}
	return Policy{Name: v.Name, Config: &c, OnRecorded: true, TTL: v.TTL}
}

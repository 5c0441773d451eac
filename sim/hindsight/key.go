package hindsight

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Key names a solve for a store that outlives the process (package
// hindcache): a SHA-256 of every field of every call (times with their
// zone), the search options, each model's rates and latency as Solve
// resolves them, and the caller's parts (Separate's grouping, say). A
// collision would return another tape's optimum, so the key is
// cryptographic, unlike the Memo's, which compares the tape it finds.
// The solver's own code is not in it: a store keys its entries by the
// executable's build as well.
type Key [sha256.Size]byte

// KeyOf is the key of calls solved under opts, then changed by what parts
// name; the error is Solve's for a model it cannot price.
func KeyOf(calls []Call, opts Options, parts ...string) (Key, error) {
	h := sha256.New()
	var b []byte
	u := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	i64 := func(v int64) { u(uint64(v)) }
	str := func(s string) { u(uint64(len(s))); b = append(b, s...) }
	flag := func(v bool) {
		if v {
			u(1)
		} else {
			u(0)
		}
	}
	str("ctxsim hindsight key 1")
	i64(int64(opts.Beam))
	i64(int64(opts.FullChoices))
	u(uint64(len(parts)))
	for _, p := range parts {
		str(p)
	}
	seen := map[string]bool{}
	for i := range calls {
		c := &calls[i]
		if !seen[c.Model] {
			seen[c.Model] = true
			r, err := opts.rules(c.Model)
			if err != nil {
				return Key{}, err
			}
			// Rates and latency by value, in full (JSON keeps every float
			// exactly).
			p, err := json.Marshal(struct {
				Price   any
				Latency any
			}{r.price, r.lat})
			if err != nil {
				return Key{}, fmt.Errorf("hindsight: key of model %s: %v", c.Model, err)
			}
			str(c.Model)
			str(string(p))
		}
		zone, off := c.Time.Zone()
		i64(c.Time.Unix())
		i64(int64(c.Time.Nanosecond()))
		str(zone)
		i64(int64(off))
		str(c.Key)
		str(c.Model)
		i64(int64(c.Total))
		i64(int64(c.Output))
		i64(int64(c.ReadLimit))
		flag(c.Limited)
		i64(int64(c.Window))
		flag(c.Fixed)
		u(uint64(len(c.Policy)))
		for _, bp := range c.Policy {
			i64(int64(bp.Block))
			u(uint64(bp.TTL))
		}
		u(uint64(len(c.Blocks)))
		for _, bl := range c.Blocks {
			u(bl.Chain)
			i64(int64(bl.End))
			flag(bl.Cacheable)
		}
		h.Write(b)
		b = b[:0]
	}
	h.Write(b)
	var k Key
	h.Sum(k[:0])
	return k, nil
}

// stored is a Result's exported fields, as a store keeps them.
type stored struct {
	CostUSD     float64
	BoundUSD    float64
	Exact       bool
	Schedule    [][]prompt.Breakpoint
	Usage       []traces.Usage
	Cost        []float64
	PolicyUSD   float64
	PolicyUsage []traces.Usage
	PolicyCost  []float64
	Source      string
	SearchUSD   float64
}

// MarshalBinary encodes r's exported fields (JSON, which keeps every
// float exactly). The schedules Solve tried are not kept: a Result read
// back cannot be Separated again, so a store keeps results after
// Separate, with its grouping in the key.
func (r *Result) MarshalBinary() ([]byte, error) {
	return json.Marshal(stored{r.CostUSD, r.BoundUSD, r.Exact, r.Schedule, r.Usage, r.Cost, r.PolicyUSD, r.PolicyUsage, r.PolicyCost, r.Source, r.SearchUSD})
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (r *Result) UnmarshalBinary(b []byte) error {
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s.Usage) != len(s.Schedule) || len(s.Cost) != len(s.Schedule) || len(s.PolicyUsage) != len(s.Schedule) || len(s.PolicyCost) != len(s.Schedule) {
		return errors.New("hindsight: stored result: per-call lists of different lengths")
	}
	*r = Result{CostUSD: s.CostUSD, BoundUSD: s.BoundUSD, Exact: s.Exact, Schedule: s.Schedule, Usage: s.Usage, Cost: s.Cost,
		PolicyUSD: s.PolicyUSD, PolicyUsage: s.PolicyUsage, PolicyCost: s.PolicyCost, Source: s.Source, SearchUSD: s.SearchUSD}
	return nil
}

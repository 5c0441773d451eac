package hindsight

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

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
	str("ctxsim hindsight key 3")
	i64(int64(opts.Beam))
	i64(int64(opts.FullChoices))
	i64(int64(opts.MaxLayerEntries))
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
		// A call's blocks as how many lead it shares with the previous
		// call's (a conversation grows: most) and the rest, each block
		// hashed once, not once per call that sends it.
		shared := 0
		if i > 0 {
			shared = commonPrefix(c.Blocks, calls[i-1].Blocks)
		}
		b = appendCall(b, c, shared)
		h.Write(b)
		b = b[:0]
	}
	h.Write(b)
	var k Key
	h.Sum(k[:0])
	return k, nil
}

// appendCall appends every field of c to b, times with their zone: the
// tape's part of KeyOf and of the Memo's key. The first shared blocks
// are written as their count only: the caller's previous call had them.
func appendCall(b []byte, c *Call, shared int) []byte {
	i64 := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	str := func(s string) { i64(int64(len(s))); b = append(b, s...) }
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
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
	i64(int64(c.KeepAlive))
	flag(c.KeptAlive)
	i64(int64(c.ReadTokens))
	flag(c.ReadInside)
	i64(int64(c.Window))
	i64(int64(c.Started))
	flag(c.Fixed)
	i64(int64(len(c.Policy)))
	for _, bp := range c.Policy {
		i64(int64(bp.Block))
		b = append(b, byte(bp.TTL))
	}
	i64(int64(len(c.Blocks)))
	i64(int64(shared))
	for _, bl := range c.Blocks[shared:] {
		i64(int64(bl.Chain))
		i64(int64(bl.End))
		flag(bl.Cacheable)
	}
	return b
}

// MarshalBinary encodes r's exported fields, every float to the bit. The
// schedules Solve tried are not kept: a Result read back cannot be
// Separated again, so a store keeps results after Separate, with its
// grouping in the key.
func (r *Result) MarshalBinary() ([]byte, error) {
	n := len(r.Schedule)
	if len(r.Usage) != n || len(r.Cost) != n || len(r.PolicyUsage) != n || len(r.PolicyCost) != n {
		return nil, errors.New("hindsight: result: per-call lists of different lengths")
	}
	b := []byte{resultVersion}
	f := func(v float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
	usage := func(u traces.Usage) {
		for _, v := range [...]int64{u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead, u.Output} {
			b = binary.AppendVarint(b, v)
		}
	}
	f(r.CostUSD)
	f(r.BoundUSD)
	f(r.PolicyUSD)
	f(r.SearchUSD)
	b = append(b, boolByte(r.Exact))
	b = binary.AppendUvarint(b, uint64(r.Capped))
	b = binary.AppendUvarint(b, uint64(len(r.Source)))
	b = append(b, r.Source...)
	// Which lists are nil, so that a result reads back as it was.
	b = append(b, boolByte(r.Schedule == nil), boolByte(r.Usage == nil), boolByte(r.Cost == nil), boolByte(r.PolicyUsage == nil), boolByte(r.PolicyCost == nil))
	b = binary.AppendUvarint(b, uint64(n))
	for i := range n {
		bps := r.Schedule[i]
		if bps == nil {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(bps))+1)
		}
		for _, bp := range bps {
			b = binary.AppendVarint(b, int64(bp.Block))
			b = append(b, byte(bp.TTL))
		}
		usage(r.Usage[i])
		f(r.Cost[i])
		usage(r.PolicyUsage[i])
		f(r.PolicyCost[i])
	}
	return b, nil
}

// resultVersion is MarshalBinary's format.
const resultVersion = 2

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (r *Result) UnmarshalBinary(b []byte) error {
	bad := errors.New("hindsight: stored result cut short or malformed")
	if len(b) == 0 || b[0] != resultVersion {
		return errors.New("hindsight: stored result of another format")
	}
	b = b[1:]
	ok := true
	f := func() float64 {
		if len(b) < 8 {
			ok = false
			return 0
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		return v
	}
	varint := func() int64 {
		v, w := binary.Varint(b)
		if w <= 0 {
			ok = false
			return 0
		}
		b = b[w:]
		return v
	}
	uvarint := func() uint64 {
		v, w := binary.Uvarint(b)
		if w <= 0 {
			ok = false
			return 0
		}
		b = b[w:]
		return v
	}
	byte1 := func() byte {
		if len(b) == 0 {
			ok = false
			return 0
		}
		v := b[0]
		b = b[1:]
		return v
	}
	flag := func() bool {
		v := byte1()
		ok = ok && v <= 1
		return v == 1
	}
	usage := func() traces.Usage {
		return traces.Usage{Input: varint(), CacheWrite5m: varint(), CacheWrite1h: varint(), CacheRead: varint(), Output: varint()}
	}
	var x Result
	x.CostUSD, x.BoundUSD, x.PolicyUSD, x.SearchUSD = f(), f(), f(), f()
	x.Exact = flag()
	if c := uvarint(); c <= math.MaxInt32 {
		x.Capped = int(c)
	} else {
		return bad
	}
	if m := uvarint(); ok && m <= uint64(len(b)) {
		x.Source = string(b[:m])
		b = b[m:]
	} else {
		return bad
	}
	var isNil [5]bool
	for i := range isNil {
		isNil[i] = flag()
	}
	n := uvarint()
	if !ok || n > uint64(len(b)) { // every call takes more than a byte
		return bad
	}
	x.Schedule, x.Usage, x.Cost = make([][]prompt.Breakpoint, n), make([]traces.Usage, n), make([]float64, n)
	x.PolicyUsage, x.PolicyCost = make([]traces.Usage, n), make([]float64, n)
	for i := range int(n) {
		if m := uvarint(); m > 0 {
			if m-1 > uint64(len(b)) {
				return bad
			}
			bps := make([]prompt.Breakpoint, m-1)
			for j := range bps {
				bps[j] = prompt.Breakpoint{Block: int(varint()), TTL: prompt.TTL(byte1())}
			}
			x.Schedule[i] = bps
		}
		x.Usage[i], x.Cost[i] = usage(), f()
		x.PolicyUsage[i], x.PolicyCost[i] = usage(), f()
		if !ok {
			return bad
		}
	}
	if !ok || len(b) != 0 {
		return bad
	}
	if isNil[0] {
		x.Schedule = nil
	}
	if isNil[1] {
		x.Usage = nil
	}
	if isNil[2] {
		x.Cost = nil
	}
	if isNil[3] {
		x.PolicyUsage = nil
	}
	if isNil[4] {
		x.PolicyCost = nil
	}
	*r = x
	return nil
}

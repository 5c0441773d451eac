package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// A Spec is one shard of N: K is 1-based, as in Jest's and Playwright's
// --shard K/N. The zero Spec is unsharded and owns every unit.
type Spec struct {
	K, N int
}

// MaxShards bounds N: far more than any batch engine runs at once, and
// small enough that a typo (1/10000000) is caught.
const MaxShards = 1 << 16

// Parse reads "K/N" with 1 ≤ K ≤ N ≤ MaxShards. "" is the zero Spec.
func Parse(s string) (Spec, error) {
	if s == "" {
		return Spec{}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Spec{}, fmt.Errorf("%q: want K/N, e.g. 1/4", s)
	}
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case err1 != nil || err2 != nil:
		return Spec{}, fmt.Errorf("%q: want K/N with whole numbers, e.g. 1/4", s)
	case n < 1 || n > MaxShards:
		return Spec{}, fmt.Errorf("%q: N must be 1..%d", s, MaxShards)
	case k < 1 || k > n:
		return Spec{}, fmt.Errorf("%q: K must be 1..%d (K counts from 1)", s, n)
	}
	return Spec{K: k, N: n}, nil
}

// String is "K/N", or "" for the zero Spec.
func (s Spec) String() string {
	if s.N == 0 {
		return ""
	}
	return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N)
}

// Sharded reports whether s is a real shard (N ≥ 1).
func (s Spec) Sharded() bool { return s.N > 0 }

// Owns reports whether the unit named id belongs to s. The zero Spec owns
// everything.
func (s Spec) Owns(id string) bool {
	if s.N == 0 {
		return true
	}
	return Assign(id, s.N) == s.K
}

// Assign is the shard (1..n) of the unit named id: jump consistent hashing
// (Lamping and Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm",
// 2014) of the id's xxhash. It depends on id and n only; growing n to n+1
// moves a unit only to the new shard, about 1/(n+1) of them.
func Assign(id string, n int) int {
	if n <= 1 {
		return 1
	}
	return int(jump(xxhash.Sum64String(id), int32(n))) + 1
}

// jump is the paper's algorithm, verbatim.
func jump(key uint64, buckets int32) int32 {
	var b, j int64 = -1, 0
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int32(b)
}

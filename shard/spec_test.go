package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"", Spec{}, ""},
		{"1/1", Spec{1, 1}, ""},
		{"3/8", Spec{3, 8}, ""},
		{" 2 / 4 ", Spec{2, 4}, ""},
		{"0/4", Spec{}, "K must be 1..4 (K counts from 1)"},
		{"5/4", Spec{}, "K must be 1..4"},
		{"1/0", Spec{}, "N must be 1..65536"},
		{"1/70000", Spec{}, "N must be 1..65536"},
		{"1", Spec{}, "want K/N"},
		{"a/b", Spec{}, "whole numbers"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got.String() != strings.ReplaceAll(tc.in, " ", "") {
			t.Errorf("Parse(%q).String() = %q", tc.in, got.String())
		}
	}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tenant-%05d", i)
	}
	return out
}

// The assignment is a function of the identity: pinned values catch a
// change of hash that would reshuffle every user's shards.
func TestAssignPinned(t *testing.T) {
	for _, tc := range []struct {
		id   string
		n    int
		want int
	}{
		{"recorded", 3, 3},
		{"coding-burst-1-0", 3, 1},
		{"coding-burst-1-0", 8, 7},
		{"subagents-1-1", 8, 4},
	} {
		if got := Assign(tc.id, tc.n); got != tc.want {
			t.Errorf("Assign(%q, %d) = %d, want %d", tc.id, tc.n, got, tc.want)
		}
	}
}

// jump matches the paper's reference values (as published with the Python
// and Rust ports).
func TestJumpReference(t *testing.T) {
	for _, tc := range []struct {
		key     uint64
		buckets int32
		want    int32
	}{{256, 1024, 520}, {0, 60, 0}, {1, 60, 55}, {2, 60, 46}, {1, 1, 0}} {
		if got := jump(tc.key, tc.buckets); got != tc.want {
			t.Errorf("jump(%d, %d) = %d, want %d", tc.key, tc.buckets, got, tc.want)
		}
	}
}

// Every unit is owned by exactly one shard, and the shards are balanced.
func TestOwnsPartition(t *testing.T) {
	const n = 8
	units := ids(20000)
	count := make([]int, n+1)
	for _, id := range units {
		owners := 0
		for k := 1; k <= n; k++ {
			if (Spec{k, n}).Owns(id) {
				owners++
				count[k]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s owned by %d shards", id, owners)
		}
	}
	for k := 1; k <= n; k++ {
		// 2500 expected; 5 sigma of a binomial is ~ ±234.
		if count[k] < 2250 || count[k] > 2750 {
			t.Errorf("shard %d/%d has %d of %d units", k, n, count[k], len(units))
		}
	}
}

// Adding logs moves no unit: the assignment does not depend on the others.
// Growing N by one moves about 1/(N+1) of the units, all to the new shard.
func TestAssignStable(t *testing.T) {
	units := ids(20000)
	before := map[string]int{}
	for _, id := range units[:10000] {
		before[id] = Assign(id, 8)
	}
	for _, id := range units { // the fleet doubled
		if b, ok := before[id]; ok && Assign(id, 8) != b {
			t.Fatalf("%s moved from shard %d when other units were added", id, b)
		}
	}
	for _, n := range []int{2, 8, 31} {
		moved := 0
		for _, id := range units {
			a, b := Assign(id, n), Assign(id, n+1)
			if a != b {
				moved++
				if b != n+1 {
					t.Fatalf("%s moved from %d to %d going from %d to %d shards; only to the new one", id, a, b, n, n+1)
				}
			}
		}
		frac, want := float64(moved)/float64(len(units)), 1/float64(n+1)
		if frac < 0.8*want || frac > 1.2*want {
			t.Errorf("%d→%d shards moved %.4f of units, want about %.4f", n, n+1, frac, want)
		}
	}
}

func TestZeroSpecOwnsAll(t *testing.T) {
	var s Spec
	if s.Sharded() || !s.Owns("x") || s.String() != "" {
		t.Errorf("zero Spec: Sharded=%v Owns=%v String=%q", s.Sharded(), s.Owns("x"), s.String())
	}
	if (Spec{1, 1}).Owns("x") != true {
		t.Error("1/1 must own every unit")
	}
}

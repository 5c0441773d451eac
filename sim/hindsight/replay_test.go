package hindsight

import (
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// TestReplayerBlocks: each call's provider blocks are its own, whatever
// storage the tape's calls share: a conversation growing in one array, a
// call that is a prefix of the one before, a divergence into a new array,
// a return to the first, a call with no blocks, and equal blocks in other
// arrays.
func TestReplayerBlocks(t *testing.T) {
	a := make([]Block, 0, 8)
	for k := range 6 {
		a = append(a, Block{Chain: uint64(k + 1), End: 100 * (k + 1), Cacheable: k%2 == 0})
	}
	b := []Block{{Chain: 1, End: 100, Cacheable: true}, {Chain: 99, End: 150}}
	calls := []Call{
		{Blocks: a[:2]}, {Blocks: a[:4]}, {Blocks: a[:3]}, {Blocks: b}, {Blocks: a[:6]}, {}, {Blocks: a[:5]},
		{Blocks: slices.Clone(a[:6])}, {Blocks: slices.Clone(a[:3])},
	}
	r := newReplayer(calls, Options{})
	for i, c := range calls {
		got := r.blocks[i]
		if len(got) != len(c.Blocks) {
			t.Fatalf("call %d: %d blocks, want %d", i, len(got), len(c.Blocks))
		}
		for k, x := range c.Blocks {
			if want := (prompt.Block{Chain: x.Chain, End: x.End, Cacheable: x.Cacheable}); got[k] != want {
				t.Errorf("call %d block %d: %+v, want %+v", i, k, got[k], want)
			}
		}
	}
	// A call that extends, repeats or shortens the one before (same
	// storage or equal blocks) shares its conversion.
	if &r.blocks[1][0] != &r.blocks[2][0] || &r.blocks[4][0] != &r.blocks[6][0] || &r.blocks[6][0] != &r.blocks[7][0] || &r.blocks[7][0] != &r.blocks[8][0] {
		t.Errorf("calls with a common prefix do not share their provider blocks")
	}
}

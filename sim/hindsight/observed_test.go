package hindsight

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// withPolicy gives each call a random valid breakpoint list as its
// policy's: the replay the optimum is compared with.
func withPolicy(rng *rand.Rand, calls []Call) {
	for i := range calls {
		ch := allChoices(&calls[i])
		calls[i].Policy = ch[rng.IntN(len(ch))]
	}
}

// observe returns calls with one observed event at call i: a read past
// the TTL through block keep (kept), or a re-send whose read stops at
// block keep.
func observe(calls []Call, i, keep int, kept bool) []Call {
	out := slices.Clone(calls)
	if kept {
		out[i].KeepAlive, out[i].KeptAlive = keep, true
	} else {
		out[i].ReadLimit, out[i].Limited = keep, true
	}
	return out
}

// TestObservedEvents: an observed event (a read past the TTL, a re-send)
// is a fact of the timeline, the same in every schedule, not a choice.
// On random small sessions with one event added: the search's optimum is
// the brute force's over every schedule (the provider revives the entry
// in each), the bound stays below it, the optimum is never above the
// policy's replay, and adding the event lowers the optimum by no more
// than the event's own saving: what it saved the schedule that reaches
// the new optimum, that schedule billed without it.
func TestObservedEvents(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	rng := rand.New(rand.NewPCG(25, 2))
	opts := testOpts()
	revived := 0
	for k := range n {
		calls, blocks := 3, 4
		if k%2 == 1 {
			calls, blocks = 4, 3
		}
		s := randomSession(rng, calls, blocks)
		withPolicy(rng, s.calls)
		i := 1 + rng.IntN(len(s.calls)-1)
		keep := rng.IntN(len(s.calls[i].Blocks))
		kept := k%4 != 3
		obs := observe(s.calls, i, keep, kept)
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			before, err := Solve(context.Background(), s.calls, opts)
			if err != nil {
				t.Fatal(err)
			}
			after, err := Solve(context.Background(), obs, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(t, obs, opts)
			if math.Abs(after.CostUSD-want) > eps {
				t.Errorf("with the event: Solve $%.9f (exact %v, source %s), brute force $%.9f", after.CostUSD, after.Exact, after.Source, want)
			}
			if after.BoundUSD > want+eps {
				t.Errorf("bound $%.9f above the optimum $%.9f", after.BoundUSD, want)
			}
			_, pol, err := Replay(obs, variant(obs, 0, true), opts)
			if err != nil {
				t.Fatal(err)
			}
			if after.CostUSD > sum(pol)+eps || math.Abs(after.PolicyUSD-sum(pol)) > eps {
				t.Errorf("optimum $%.9f, policy $%.9f, replay $%.9f: want optimum ≤ policy = replay", after.CostUSD, after.PolicyUSD, sum(pol))
			}
			_, without, err := Replay(s.calls, after.Schedule, opts)
			if err != nil {
				t.Fatal(err)
			}
			saving := sum(without) - after.CostUSD
			if after.CostUSD < before.CostUSD-saving-eps {
				t.Errorf("the event lowers the optimum from $%.9f to $%.9f, more than its saving $%.9f", before.CostUSD, after.CostUSD, saving)
			}
			if kept && saving > eps {
				revived++
			}
			t.Logf("optimum $%.6f → $%.6f, event saves $%.6f", before.CostUSD, after.CostUSD, saving)
		})
	}
	if revived == 0 {
		t.Errorf("no read past the TTL saved anything: the test exercises nothing")
	}
}

// TestKeptAliveSearch: a session idle for 20 minutes whose next call the
// log shows reading its whole prompt (a read past the TTL). The optimum
// reads it there, as the replay does, and never bills the prefix again;
// the search never writes an entry it may not (the revived entry sits at
// a block no breakpoint of the call marks).
func TestKeptAliveSearch(t *testing.T) {
	opts := testOpts()
	s := &session{sizes: map[int]int{1: 4000, 2: 3000, 3: 2000, 4: 500}}
	s.call(0, 10, 1, 2)
	s.call(20*time.Minute, 10, 1, 2, 3)
	s.call(21*time.Minute, 10, 1, 2, 3, 4)
	for i := range s.calls {
		s.calls[i].Policy = []prompt.Breakpoint{{Block: len(s.calls[i].Blocks) - 1, TTL: prompt.TTL5m}}
	}
	obs := observe(s.calls, 1, 1, true)
	res, err := Solve(context.Background(), obs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Usage[1].CacheRead; got != 7000 {
		t.Errorf("call 1 reads %d tokens under the optimum, want the 7,000 the log shows kept alive", got)
	}
	plain, err := Solve(context.Background(), s.calls, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostUSD >= plain.CostUSD || res.CostUSD > res.PolicyUSD {
		t.Errorf("optimum $%.6f with the read past the TTL, $%.6f without, policy $%.6f", res.CostUSD, plain.CostUSD, res.PolicyUSD)
	}
	if b, err := Bound(obs, opts); err != nil || b > res.CostUSD+eps {
		t.Errorf("bound $%.6f (%v) above the optimum $%.6f", b, err, res.CostUSD)
	}
}

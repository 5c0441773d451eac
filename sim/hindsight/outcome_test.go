package hindsight

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestRepeatsSkipped: a choice whose outcome a sibling had (repeated) is
// not stepped, and that changes nothing: on random sessions of two
// conversations, with re-sends and reads past the TTL among them and a
// narrow beam, the result (schedules tried included) is the one the
// search gives stepping every choice, and the skipped choices are many.
func TestRepeatsSkipped(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 6
	}
	rng := rand.New(rand.NewPCG(7, 25))
	skipped, stepped := 0, 0
	for k := range n {
		a, b := randomSession(rng, 12, 7), randomSession(rng, 8, 5)
		calls := append(a.calls, b.calls...)
		for i := range b.calls {
			c := &calls[len(a.calls)+i]
			c.Key = "t"
			c.Time = c.Time.Add(time.Duration(rng.IntN(40)) * time.Minute)
		}
		slices.SortStableFunc(calls, func(x, y Call) int { return x.Time.Compare(y.Time) })
		withPolicy(rng, calls)
		for range 2 {
			i := rng.IntN(len(calls))
			if keep := rng.IntN(len(calls[i].Blocks)); rng.IntN(2) == 0 {
				calls[i].KeepAlive, calls[i].KeptAlive = keep, true
			} else {
				calls[i].ReadLimit, calls[i].Limited = keep, true
			}
		}
		opts := testOpts()
		opts.Beam = []int{2, 4, 32}[k%3]
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			got, err := Solve(context.Background(), calls, opts)
			if err != nil {
				t.Fatal(err)
			}
			stepAll = true
			defer func() { stepAll = false }()
			want, err := Solve(context.Background(), calls, opts)
			if err != nil {
				t.Fatal(err)
			}
			if want.skipped != 0 {
				t.Fatalf("stepping every choice skipped %d", want.skipped)
			}
			skipped += got.skipped
			stepped++
			got.skipped = 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("skipping repeats: $%.9f (%s), stepping all: $%.9f (%s)", got.CostUSD, got.Source, want.CostUSD, want.Source)
			}
		})
	}
	if skipped < 10*stepped {
		t.Errorf("%d choices skipped over %d tapes: the check skips almost nothing", skipped, stepped)
	}
	t.Logf("%d choices skipped over %d tapes", skipped, stepped)
}

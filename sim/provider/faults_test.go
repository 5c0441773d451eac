package provider

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

type counting struct{ n int }

func (c *counting) Name() string { return "count" }
func (c *counting) Send(time.Time, *prompt.Request) (Response, error) {
	c.n++
	return Response{}, nil
}

// About Rate of the calls fail, the failures never reach the inner provider,
// and the same seed gives the same failures.
func TestFaultyRate(t *testing.T) {
	pattern := func(seed uint64) (fails int, inner int, seq []bool) {
		in := &counting{}
		f := &Faulty{Inner: in, Rate: 0.2, Rand: rand.New(rand.NewPCG(seed, 7))}
		for range 1000 {
			_, err := f.Send(time.Time{}, &prompt.Request{})
			failed := err != nil
			if failed {
				if !errors.Is(err, ErrTransient) {
					t.Fatalf("error %v, want ErrTransient", err)
				}
				fails++
			}
			seq = append(seq, failed)
		}
		return fails, in.n, seq
	}
	fails, inner, a := pattern(1)
	if fails < 160 || fails > 240 {
		t.Errorf("%d of 1000 calls failed at rate 0.2", fails)
	}
	if fails+inner != 1000 {
		t.Errorf("%d failed + %d forwarded != 1000", fails, inner)
	}
	_, _, b := pattern(1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d differs between two runs of one seed", i)
		}
	}
}

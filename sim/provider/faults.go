package provider

import (
	"math/rand/v2"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// Faulty injects transient errors into a provider: each call is rejected
// with probability Rate (a 529 "overloaded", ErrTransient) before it reaches
// the inner provider, so a rejected call neither reads nor writes the cache,
// as when the API turns a request away up front. Draws come from Rand only,
// so a run's faults are the same for the same seed.
type Faulty struct {
	Inner Provider
	Rate  float64
	Rand  *rand.Rand
}

// Name is the inner provider's name.
func (f *Faulty) Name() string { return f.Inner.Name() }

// Release implements Releaser: it releases Inner.
func (f *Faulty) Release() { Release(f.Inner) }

// Send rejects or forwards the call.
func (f *Faulty) Send(now time.Time, req *prompt.Request) (Response, error) {
	if f.Rate > 0 && f.Rand.Float64() < f.Rate {
		return Response{}, &APIError{Status: 529, Kind: ErrTransient, Msg: "overloaded (injected fault)"}
	}
	return f.Inner.Send(now, req)
}

package provider

import (
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
)

// A Router sends each request to the provider of its model, so that one
// account's Claude Code and Codex sessions, replayed together, each meet
// their own provider's cache rules (a Claude session billed on OpenAI's
// automatic cache would pay no writes). Each provider is made once, on
// its first request.
type Router struct {
	// For names the provider of a model ("anthropic", "openai", ...).
	For func(model string) string
	// New makes the provider named.
	New func(name string) (Provider, error)
	by  map[string]Provider
}

// Name implements Provider.
func (r *Router) Name() string { return "auto" }

// Send implements Provider.
func (r *Router) Send(now time.Time, req *prompt.Request) (Response, error) {
	name := r.For(req.Model)
	p, ok := r.by[name]
	if !ok {
		var err error
		if p, err = r.New(name); err != nil {
			return Response{}, err
		}
		if r.by == nil {
			r.by = map[string]Provider{}
		}
		r.by[name] = p
	}
	return p.Send(now, req)
}

// Release implements Releaser: every provider r made.
func (r *Router) Release() {
	for _, p := range r.by {
		Release(p)
	}
	r.by = nil
}

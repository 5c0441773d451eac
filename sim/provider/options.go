package provider

import (
	"fmt"

	"github.com/ctxsim/ctxsim/pricing"
)

// Common holds the options every provider takes.
type Common struct {
	// Prices gives each model's window, minimum cacheable length and, for
	// OpenAI, its discount; nil means pricing.Default().
	Prices *pricing.Card
	// Latency overrides the provider's per-model default (DefaultLatency).
	Latency *Latency
	// Blocks is about how many distinct prompt blocks the provider will
	// see (a tenant's, say): a size hint for its cache, which then does
	// not grow entry by entry. 0 is unknown. It changes no answer.
	Blocks int
}

func (c *Common) price(model string) (pricing.Price, error) {
	if c.Prices == nil {
		c.Prices = pricing.Default()
	}
	return c.Prices.Lookup(model)
}

func (c *Common) latency(provider, model string) Latency {
	if c.Latency != nil {
		return *c.Latency
	}
	return DefaultLatency(provider, model)
}

func overflow(total, window int) error {
	if window > 0 && total > window {
		return &APIError{Status: 400, Kind: ErrContextOverflow, Msg: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", total, window)}
	}
	return nil
}

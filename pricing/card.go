package pricing

import (
	"fmt"
	"sort"
	"strings"
)

// A Card is a set of prices by model id.
type Card struct {
	prices map[string]Price
}

// NewCard returns a card holding ps.
func NewCard(ps ...Price) *Card {
	c := &Card{prices: map[string]Price{}}
	for _, p := range ps {
		c.Set(p)
	}
	return c
}

// Set adds or replaces the price of p.Model.
func (c *Card) Set(p Price) { c.prices[p.Model] = p }

// Models lists the card's model ids, sorted.
func (c *Card) Models() []string {
	out := make([]string, 0, len(c.prices))
	for m := range c.prices {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Lookup finds the price of model: an exact id, else the id with a date
// suffix removed ("claude-sonnet-4-5-20250929" → "claude-sonnet-4-5"). An
// unknown model is an error that says how to supply a price.
func (c *Card) Lookup(model string) (Price, error) {
	if p, ok := c.prices[model]; ok {
		return p, nil
	}
	if p, ok := c.prices[normalize(model)]; ok {
		return p, nil
	}
	return Price{}, fmt.Errorf("pricing: no price for model %q: pass --prices FILE with a LiteLLM model_prices_and_context_window.json entry for it", model)
}

func normalize(model string) string {
	m := strings.TrimSpace(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, '['); i >= 0 {
		m = m[:i]
	}
	if i := strings.LastIndexByte(m, '-'); i >= 0 && len(m)-i-1 == 8 && allDigits(m[i+1:]) {
		m = m[:i]
	}
	return m
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// Default is the embedded rate card.
func Default() *Card {
	return NewCard(builtin...)
}

// builtin is a placeholder list until the embedded card lands; see rates.go.
var builtin = []Price{
	{Model: "claude-opus-4-6", Provider: "anthropic", Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5, Window: 200000, MaxOutput: 128000, MinCacheable: 4096, Source: "reference/providers.md §1.5", Date: "2026-11"},
}

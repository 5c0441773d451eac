package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/internal/input"
)

// A Card is a set of prices by model id, with aliases. Lookup normalizes
// the ids providers and harnesses log (dates, provider prefixes, context
// tags) before it gives up.
type Card struct {
	prices  map[string]Price
	aliases map[string]string
	// fallback answers what the card itself cannot (the embedded LiteLLM
	// snapshot behind the hand-checked rates, parsed only when a model
	// is not on the card itself); nil for none.
	fallback func() *Card
}

// NewCard returns a card holding ps.
func NewCard(ps ...Price) *Card {
	c := &Card{prices: map[string]Price{}, aliases: map[string]string{}}
	for _, p := range ps {
		c.Set(p)
	}
	return c
}

// Set adds or replaces the price of p.Model.
func (c *Card) Set(p Price) { c.prices[p.Model] = p }

// Alias makes alias look up as model.
func (c *Card) Alias(alias, model string) { c.aliases[alias] = model }

// Models lists the card's model ids, sorted.
func (c *Card) Models() []string {
	out := make([]string, 0, len(c.prices))
	for m := range c.prices {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Lookup finds the price of model: the exact id or alias, else the
// normalized id (see Normalize). An unknown model is an error that names the
// model and says how to supply a price; it is never a silent $0.
func (c *Card) Lookup(model string) (Price, error) {
	if p, ok := c.find(model); ok {
		return p, nil
	}
	if p, ok := c.find(Normalize(model)); ok {
		return p, nil
	}
	if c.fallback != nil {
		if p, err := c.fallback().Lookup(model); err == nil {
			return p, nil
		}
	}
	return Price{}, &input.Error{Msg: fmt.Sprintf("pricing: no price for model %q: give a {price file} with a LiteLLM model_prices_and_context_window.json entry for it", model)}
}

func (c *Card) find(id string) (Price, bool) {
	if p, ok := c.prices[id]; ok {
		return p, true
	}
	if m, ok := c.aliases[id]; ok {
		p, ok := c.prices[m]
		return p, ok
	}
	return Price{}, false
}

// Normalize reduces a logged model id to the card's form: lower case, no
// provider or deployment prefix ("anthropic/", "openrouter/anthropic/",
// Bedrock's "us.anthropic."), no context tag ("[1m]"), no version or date
// suffix ("-v1:0", "@20250805", "-20250929", "-2024-08-06", "-latest").
//
// "[1m]" (the 1M-context beta) maps to the base model's price: long-context
// surcharges above 200K prompt tokens are not modelled, so such prompts are
// under-priced.
func Normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "anthropic."); i >= 0 {
		m = m[i+len("anthropic."):]
	}
	if i := strings.IndexByte(m, '['); i >= 0 {
		m = m[:i]
	}
	if i := strings.IndexByte(m, '@'); i >= 0 {
		m = m[:i]
	}
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	m = strings.TrimSuffix(m, "-latest")
	// OpenRouter writes Claude versions with dots ("claude-sonnet-4.5");
	// Anthropic with dashes. GPT ids keep their dots ("gpt-5.1").
	if strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-")
	}
	// Bedrock's "-v2" follows a date ("...-20241022-v2"); "deepseek-v4"
	// keeps its v.
	if i := strings.LastIndex(m, "-v"); i >= 9 && allDigits(m[i+2:]) && m[i-9] == '-' && allDigits(m[i-8:i]) {
		m = m[:i]
	}
	// -YYYYMMDD
	if i := strings.LastIndexByte(m, '-'); i >= 0 && len(m)-i-1 == 8 && allDigits(m[i+1:]) {
		m = m[:i]
	}
	// -YYYY-MM-DD
	if n := len(m); n > 11 && m[n-11] == '-' && m[n-6] == '-' && m[n-3] == '-' &&
		allDigits(m[n-10:n-6]) && allDigits(m[n-5:n-3]) && allDigits(m[n-2:]) {
		m = m[:n-11]
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

//go:embed rates.json
var ratesJSON []byte

type rateEntry struct {
	Price
	Aliases []string `json:"aliases,omitempty"`
}

type rateFile struct {
	About  string      `json:"about"`
	Models []rateEntry `json:"models"`
}

// builtin is the parsed embedded card; parsing it is checked by a test, so
// a failure here is a build defect, not bad input. It and the snapshot are
// parsed on first use, not at start-up (the snapshot took ~7 ms of every
// process's start, priced or not).
var builtin = sync.OnceValue(func() []rateEntry {
	var f rateFile
	if err := json.Unmarshal(ratesJSON, &f); err != nil {
		panic("pricing: embedded rates.json: " + err.Error())
	}
	return f.Models
})

// Default returns a fresh copy of the embedded rate card: first rates.json
// (Claude, OpenAI and DeepSeek models checked by hand, each entry with its
// source and date, minimum cacheable lengths and 1h rates), then, for any
// model it does not know, the embedded LiteLLM snapshot (litellm.json, see
// Snapshot). Callers may change the copy (LoadLiteLLM, which overrides
// both) without affecting others.
func Default() *Card {
	c := NewCard()
	for _, e := range builtin() {
		c.Set(e.Price)
		for _, a := range e.Aliases {
			c.Alias(a, e.Model)
		}
	}
	c.fallback = func() *Card { return snapshot().card }
	return c
}

//go:embed litellm.json
var liteLLMJSON []byte

// SnapshotInfo says where the embedded LiteLLM snapshot comes from.
type SnapshotInfo struct {
	Source string `json:"source"`
	Date   string `json:"date"`
	// Models is how many priced entries it holds.
	Models int `json:"models"`
}

// Snapshot describes the embedded LiteLLM snapshot.
func Snapshot() SnapshotInfo { return snapshot().info }

// snapshot is the parsed litellm.json: an immutable card every Default card
// falls back on. Its minimum cacheable lengths and windows come from the
// rates.json entry of the same normalized id, as for a --prices file.
// Parsing it is checked by a test, so a failure here is a build defect, not
// bad input.
var snapshot = sync.OnceValue(func() (s struct {
	card *Card
	info SnapshotInfo
}) {
	var about struct {
		About SnapshotInfo `json:"_about"`
	}
	if err := json.Unmarshal(liteLLMJSON, &about); err != nil {
		panic("pricing: embedded litellm.json: " + err.Error())
	}
	base := NewCard()
	for _, e := range builtin() {
		base.Set(e.Price)
	}
	s.card = NewCard()
	if err := s.card.loadLiteLLM(liteLLMJSON, "embedded litellm.json", base); err != nil {
		panic("pricing: " + err.Error())
	}
	for k, p := range s.card.prices {
		p.Source, p.Date = "LiteLLM snapshot (litellm.json)", about.About.Date
		s.card.prices[k] = p
	}
	s.info = about.About
	s.info.Models = len(s.card.prices)
	return s
})

package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ctxsim/ctxsim/traces"
)

// liteLLMEntry is the part of a LiteLLM model_prices_and_context_window.json
// entry the card uses. Costs are USD per token.
type liteLLMEntry struct {
	Input      *float64 `json:"input_cost_per_token"`
	Output     *float64 `json:"output_cost_per_token"`
	CacheRead  *float64 `json:"cache_read_input_token_cost"`
	CacheWrite *float64 `json:"cache_creation_input_token_cost"`
	// LiteLLM spells the 1h-tier write rate "above_1hr".
	CacheWrite1h *float64 `json:"cache_creation_input_token_cost_above_1hr"`
	MaxInput     *float64 `json:"max_input_tokens"`
	MaxOutput    *float64 `json:"max_output_tokens"`
	Provider     string   `json:"litellm_provider"`
}

// maxPerToken bounds a per-token price: $1 a token is $10^6 per million,
// over a thousand times the dearest model listed (o1-pro's output, $600/M,
// 2025). A larger one is a typo or an attack, and priced through it would
// overflow dollars to Inf and NaN.
const maxPerToken = 1.0

// maxTokens bounds max_input_tokens and max_output_tokens (10^9, as
// traces.MaxCallTokens).
const maxTokens = 1_000_000_000

// maxLiteLLMErrors bounds the error list of a badly damaged file.
const maxLiteLLMErrors = 10

// MaxLiteLLMFile is the largest price file LoadLiteLLM takes (64 MiB;
// LiteLLM's own, every model it knows, is under 2 MiB).
const MaxLiteLLMFile = 64 << 20

// LoadLiteLLM reads a LiteLLM model_prices_and_context_window.json from r
// (name is used in messages) and adds its entries to the card, replacing
// entries of the same id. Entries are stored under LiteLLM's keys as given
// ("claude-opus-4-6", "anthropic/claude-opus-4-6", ...); Lookup tries the
// exact id before normalizing, so a file entry beats a built-in one.
//
// Missing rates follow the provider's rules: no cache-write rate means free
// writes (write = input); no 1h rate means 2× input for Anthropic models and
// the 5m rate otherwise; no cache-read rate means no discount (read =
// input). The minimum cacheable length, which LiteLLM does not carry, comes
// from the built-in entry of the same normalized id, else from the
// provider's default (Anthropic 1024, DeepSeek 64, others 1024).
//
// Entries without per-token prices (image or audio models priced per unit)
// and the "sample_spec" key are skipped. A malformed entry is an error
// ("name: model \"x\": field: reason"); the card is changed only when the
// whole file is good.
func (c *Card) LoadLiteLLM(r io.Reader, name string) error {
	data, err := traces.ReadDocument(r, MaxLiteLLMFile)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return c.loadLiteLLM(data, name, c)
}

// loadLiteLLM is LoadLiteLLM on data, taking minimum cacheable lengths and
// windows from base.
func (c *Card) loadLiteLLM(data []byte, name string, base *Card) error {
	entries, err := liteLLMEntries(data, name)
	if err != nil {
		return err
	}
	var errs []error
	var add []Price
	for _, e := range entries {
		k := e.key
		if k == "sample_spec" || k == "_about" {
			continue
		}
		p, ok, err := parseLiteLLM(k, e.raw, base)
		if err != nil {
			if len(errs) < maxLiteLLMErrors {
				errs = append(errs, fmt.Errorf("%s:%d: model %q: %w", name, e.line, k, err))
			}
			continue
		}
		if ok {
			add = append(add, p)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, p := range add {
		c.Set(p)
	}
	return nil
}

// A liteLLMEntry is one model of a price file as written: its key, the
// line the key is on, and its value.
type liteLLMKey struct {
	key  string
	line int
	raw  json.RawMessage
}

// liteLLMEntries reads a price file's top-level object, in file order,
// with each key's line, so that what is refused names its file and line
// ("name:LINE: ..."). A key given twice is refused (encoding/json would
// keep the last in silence), as is anything after the object.
func liteLLMEntries(data []byte, name string) ([]liteLLMKey, error) {
	lines := lineCounter{data: data, line: 1}
	notFile := func(off int64, why string) error {
		return fmt.Errorf("%s:%d: not a LiteLLM price file (want a JSON object of models): %s", name, lines.at(off), why)
	}
	syntax := func(err error, off int64) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			off = int64(len(data))
			err = errors.New("unexpected end of file")
		}
		return notFile(off, err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err, dec.InputOffset())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, notFile(dec.InputOffset(), fmt.Sprintf("starts with %v", tok))
	}
	var out []liteLLMKey
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err, dec.InputOffset())
		}
		key := tok.(string) // an object's keys are strings, or Token fails
		line := lines.at(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntax(err, dec.InputOffset())
		}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d: model %q: given twice (first at line %d)", name, line, key, first)
		}
		seen[key] = line
		out = append(out, liteLLMKey{key: key, line: line, raw: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntax(err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notFile(dec.InputOffset(), "more after the object")
	}
	return out, nil
}

// lineCounter turns byte offsets of data, asked in increasing order, into
// 1-based line numbers, counting each newline once.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

func (l *lineCounter) at(off int64) int {
	off = min(max(off, 0), int64(len(l.data)))
	if off < l.off { // out of order: count afresh
		l.off, l.line = 0, 1
	}
	l.line += bytes.Count(l.data[l.off:off], []byte{'\n'})
	l.off = off
	return l.line
}

func parseLiteLLM(key string, raw json.RawMessage, base *Card) (Price, bool, error) {
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] != '{' {
		return Price{}, false, errors.New("entry: want a JSON object")
	}
	var e liteLLMEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Price{}, false, fmt.Errorf("%s: want a %s, got %s", te.Field, te.Type, te.Value)
		}
		return Price{}, false, err
	}
	if e.Input == nil && e.Output == nil {
		return Price{}, false, nil
	}
	fields := []struct {
		name string
		v    *float64
	}{
		{"input_cost_per_token", e.Input},
		{"output_cost_per_token", e.Output},
		{"cache_read_input_token_cost", e.CacheRead},
		{"cache_creation_input_token_cost", e.CacheWrite},
		{"cache_creation_input_token_cost_above_1hr", e.CacheWrite1h},
		{"max_input_tokens", e.MaxInput},
		{"max_output_tokens", e.MaxOutput},
	}
	for i, f := range fields {
		if f.v == nil {
			continue
		}
		if *f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
			return Price{}, false, fmt.Errorf("%s: %v is not a price or size (want ≥ 0)", f.name, *f.v)
		}
		if i < 5 && *f.v > maxPerToken {
			return Price{}, false, fmt.Errorf("%s: %v USD per token is not a plausible price (want at most %v)", f.name, *f.v, maxPerToken)
		}
		if i >= 5 && *f.v > maxTokens {
			return Price{}, false, fmt.Errorf("%s: %v is not a plausible size (want at most %v tokens)", f.name, *f.v, float64(maxTokens))
		}
	}
	if e.Input == nil {
		return Price{}, false, errors.New("input_cost_per_token: missing (output_cost_per_token is set)")
	}
	if e.Output == nil {
		return Price{}, false, errors.New("output_cost_per_token: missing (input_cost_per_token is set)")
	}
	perM := func(v float64) float64 { return round(v * 1e6) }
	p := Price{
		Model:    key,
		Provider: e.Provider,
		Input:    perM(*e.Input),
		Output:   perM(*e.Output),
		Source:   "LiteLLM model_prices_and_context_window.json",
	}
	p.CacheRead = p.Input
	if e.CacheRead != nil {
		p.CacheRead = perM(*e.CacheRead)
	}
	p.CacheWrite5m = p.Input
	if e.CacheWrite != nil {
		p.CacheWrite5m = perM(*e.CacheWrite)
	}
	anthropic := isAnthropic(e.Provider, key)
	switch {
	case e.CacheWrite1h != nil:
		p.CacheWrite1h = perM(*e.CacheWrite1h)
	case anthropic:
		p.CacheWrite1h = 2 * p.Input
		if p.CacheWrite1h > maxPerToken*1e6 {
			// The default, bounded as a rate given would be (found by
			// FuzzLiteLLM: such a file could not be written back).
			return Price{}, false, fmt.Errorf("cache_creation_input_token_cost_above_1hr: missing, and twice input_cost_per_token (Anthropic's 1h rate), %v USD per token, is not a plausible price (want at most %v)", 2**e.Input, maxPerToken)
		}
	default:
		p.CacheWrite1h = p.CacheWrite5m
	}
	if e.MaxInput != nil {
		p.Window = int(*e.MaxInput)
	}
	if e.MaxOutput != nil {
		p.MaxOutput = int(*e.MaxOutput)
	}
	if b, ok := base.find(Normalize(key)); ok {
		p.MinCacheable = b.MinCacheable
		if p.Window == 0 {
			p.Window = b.Window
		}
	} else {
		switch {
		case e.Provider == "deepseek":
			p.MinCacheable = 64
		default:
			p.MinCacheable = 1024
		}
	}
	return p, true, nil
}

func isAnthropic(provider, key string) bool {
	if provider == "anthropic" {
		return true
	}
	n := Normalize(key)
	return len(n) >= 7 && n[:7] == "claude-"
}

// round removes the float noise of per-token → per-MTok conversion
// (3e-06 × 1e6 = 2.9999999999999996), to 1e-9 USD/MTok.
func round(v float64) float64 { return math.Round(v*1e9) / 1e9 }

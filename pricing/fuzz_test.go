package pricing

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// encodeLiteLLM writes prices as a LiteLLM price file: every rate and size
// explicit, so that reading it back needs no default.
func encodeLiteLLM(prices map[string]Price) []byte {
	type entry struct {
		Input        float64 `json:"input_cost_per_token"`
		Output       float64 `json:"output_cost_per_token"`
		CacheRead    float64 `json:"cache_read_input_token_cost"`
		CacheWrite   float64 `json:"cache_creation_input_token_cost"`
		CacheWrite1h float64 `json:"cache_creation_input_token_cost_above_1hr"`
		MaxInput     int     `json:"max_input_tokens,omitempty"`
		MaxOutput    int     `json:"max_output_tokens,omitempty"`
		Provider     string  `json:"litellm_provider,omitempty"`
	}
	out := map[string]entry{}
	for k, p := range prices {
		out[k] = entry{p.Input / 1e6, p.Output / 1e6, p.CacheRead / 1e6, p.CacheWrite5m / 1e6, p.CacheWrite1h / 1e6, p.Window, p.MaxOutput, p.Provider}
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		panic(err)
	}
	return b
}

var refusedAt = regexp.MustCompile(`^p\.json:([0-9]+): `)

// FuzzLiteLLM reads any bytes as a --prices file, with two oracles: what
// is refused names the file and a line of it (every error of the list),
// and leaves the card as it was; what is read, written back as a price
// file, reads back to the same prices.
func FuzzLiteLLM(f *testing.F) {
	f.Add([]byte(`{"m": {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5, "cache_read_input_token_cost": 3e-7, "cache_creation_input_token_cost": 3.75e-6, "max_input_tokens": 200000, "litellm_provider": "anthropic"}}`))
	f.Add([]byte(`{"claude-opus-4-6": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}, "gpt-x": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "openai", "max_output_tokens": 0.5}}`))
	f.Add([]byte(`{"sample_spec": {"input_cost_per_token": 0}, "img": {"output_cost_per_image": 0.04}}`))
	f.Add([]byte("{\n\"m9\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 1e-6},\n\"m9\": {}}"))
	f.Add([]byte("{\"a\": {\"input_cost_per_token\": -1,\n\"output_cost_per_token\": 1e303}, \"b\": 3}\n{}"))
	f.Add([]byte(`{"m": {"input_cost_per_token": 1e999, "output_cost_per_token": "x"}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte("{\"\xff\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 1e-6}}"))
	f.Add(liteLLMJSON[:min(len(liteLLMJSON), 4000)])
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		before := len(c.prices)
		err := c.LoadLiteLLM(bytes.NewReader(data), "p.json")
		if err != nil {
			lines := bytes.Count(data, []byte{'\n'}) + 1
			for _, msg := range strings.Split(err.Error(), "\n") {
				m := refusedAt.FindStringSubmatch(msg)
				if m == nil {
					t.Fatalf("refused without naming file and line: %q", msg)
				}
				if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
					t.Fatalf("refused at line %d of a %d-line file: %q", n, lines, msg)
				}
			}
			if len(c.prices) != before {
				t.Fatalf("a refused file changed the card (%d -> %d prices)", before, len(c.prices))
			}
			return
		}
		base := Default()
		read := NewCard()
		if err := read.loadLiteLLM(data, "p.json", base); err != nil {
			t.Fatalf("read on a default card, refused on a new one: %v", err)
		}
		again := NewCard()
		enc := encodeLiteLLM(read.prices)
		if err := again.loadLiteLLM(enc, "again.json", base); err != nil {
			t.Fatalf("written back, refused: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(read.prices, again.prices) {
			for k, p := range read.prices {
				if q := again.prices[k]; !reflect.DeepEqual(p, q) {
					t.Fatalf("%q read %+v, written and read back %+v", k, p, q)
				}
			}
			t.Fatalf("read %d prices, written and read back %d", len(read.prices), len(again.prices))
		}
	})
}

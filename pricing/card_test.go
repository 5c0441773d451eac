package pricing

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/traces"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"claude-opus-4-6", "claude-opus-4-6"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-opus-4-6[1m]", "claude-opus-4-6"},
		{"Claude-Opus-4-6 ", "claude-opus-4-6"},
		{"anthropic/claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"openrouter/anthropic/claude-3-7-sonnet", "claude-3-7-sonnet"},
		{"us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"},
		{"vertex_ai/claude-opus-4-1@20250805", "claude-opus-4-1"},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"openai/gpt-5.4-mini", "gpt-5.4-mini"},
		{"deepseek-v4-flash", "deepseek-v4-flash"},
		{"deepseek/deepseek-chat", "deepseek-chat"},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"openrouter/anthropic/claude-opus-4.6", "claude-opus-4-6"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDefaultCard(t *testing.T) {
	c := Default()
	want := []string{
		"claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5", "claude-opus-4-1", "claude-opus-4",
		"claude-sonnet-4-6", "claude-sonnet-4-5", "claude-sonnet-4", "claude-3-7-sonnet", "claude-3-5-sonnet",
		"claude-haiku-4-5", "claude-3-5-haiku", "claude-3-haiku",
		"gpt-4o", "gpt-4o-mini", "o1", "gpt-4.1", "gpt-5", "gpt-5.1", "gpt-5-mini", "gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.5",
		"deepseek-chat", "deepseek-reasoner", "deepseek-v4-flash", "deepseek-v4-pro",
	}
	for _, m := range want {
		if _, err := c.Lookup(m); err != nil {
			t.Errorf("Lookup(%q): %v", m, err)
		}
	}
	for _, m := range c.Models() {
		p, _ := c.Lookup(m)
		if p.Input <= 0 || p.Output <= 0 || p.CacheRead <= 0 || p.CacheRead > p.Input {
			t.Errorf("%s: implausible rates %+v", m, p)
		}
		if p.CacheWrite5m < p.Input || p.CacheWrite1h < p.CacheWrite5m {
			t.Errorf("%s: writes must cost at least input, 1h at least 5m: %+v", m, p)
		}
		if p.Window <= 0 || p.MinCacheable <= 0 || p.Source == "" || p.Date == "" || p.Provider == "" {
			t.Errorf("%s: missing window, min cacheable, provider, source or date: %+v", m, p)
		}
		// Haiku 3's published rates are rounded (0.30, not 0.3125).
		if p.Provider == "anthropic" && m != "claude-3-haiku" && (p.CacheWrite5m != 1.25*p.Input || p.CacheWrite1h != 2*p.Input) {
			t.Errorf("%s: Anthropic writes are 1.25× and 2× input: %+v", m, p)
		}
	}
	// Default hands out copies.
	c.Set(Price{Model: "claude-opus-4-6", Input: 99})
	if p, _ := Default().Lookup("claude-opus-4-6"); p.Input != 5 {
		t.Errorf("Default() shares state: opus input = %v after changing another card", p.Input)
	}
}

func TestLookupAliasesAndErrors(t *testing.T) {
	c := Default()
	for m, want := range map[string]string{
		"claude-sonnet-4-0":         "claude-sonnet-4",
		"claude-sonnet-4-20250514":  "claude-sonnet-4",
		"claude-opus-4-6[1m]":       "claude-opus-4-6",
		"anthropic/claude-opus-4-6": "claude-opus-4-6",
	} {
		if p, err := c.Lookup(m); err != nil || p.Model != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", m, p.Model, err, want)
		}
	}
	_, err := c.Lookup("grok-4")
	if err == nil {
		t.Fatal("Lookup(grok-4) = nil error, want unknown model")
	}
	// It names the price file as an input, in braces, for the CLI to
	// render as its flag (internal/input), and in words where no CLI does.
	var in *input.Error
	if !errors.As(err, &in) || !strings.Contains(in.Msg, "{price file}") || !strings.Contains(err.Error(), `"grok-4"`) ||
		strings.Contains(err.Error(), "--") {
		t.Errorf("unknown-model error %q (%+v): want the model and the {price file} input, no flag", err, in)
	}
}

func TestCostOpus46(t *testing.T) {
	// The shared session 4d5611e5: ccusage says $9.53.
	p, err := Default().Lookup("claude-opus-4-6")
	require.NoError(t, err)
	u := traces.Usage{Input: 177, CacheWrite5m: 479537, CacheRead: 11618567, Output: 28755}
	if got, want := p.Cost(u), 9.52614975; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("Cost = %.8f, want %.8f", got, want)
	}
	one := traces.Usage{CacheWrite1h: 1_000_000}
	if got := p.Cost(one); got != 10 {
		t.Errorf("1M 1h-write tokens cost %v, want 10 (2× input)", got)
	}
}

const liteLLMSample = `{
  "sample_spec": {"input_cost_per_token": "not a number", "litellm_provider": "x"},
  "claude-opus-4-6": {"input_cost_per_token": 6e-06, "output_cost_per_token": 2.5e-05,
    "cache_read_input_token_cost": 5e-07, "cache_creation_input_token_cost": 6.25e-06,
    "max_input_tokens": 200000, "max_output_tokens": 128000, "litellm_provider": "anthropic"},
  "gemini-2.5-pro": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05,
    "cache_read_input_token_cost": 3.125e-07, "max_input_tokens": 1048576, "litellm_provider": "gemini"},
  "dall-e-3": {"output_cost_per_pixel": 0.0, "litellm_provider": "openai", "mode": "image_generation"}
}`

func TestLoadLiteLLM(t *testing.T) {
	c := Default()
	require.NoError(t, c.LoadLiteLLM(strings.NewReader(liteLLMSample), "prices.json"))
	opus, err := c.Lookup("claude-opus-4-6")
	require.NoError(t, err)
	if opus.Input != 6 || opus.Output != 25 || opus.CacheWrite5m != 6.25 || opus.CacheRead != 0.5 {
		t.Errorf("override: opus = %+v, want input 6 output 25 write 6.25 read 0.5", opus)
	}
	if opus.CacheWrite1h != 12 {
		t.Errorf("override: opus 1h write = %v, want 12 (2× input when LiteLLM gives none)", opus.CacheWrite1h)
	}
	if opus.MinCacheable != 4096 {
		t.Errorf("override: opus min cacheable = %d, want the built-in 4096", opus.MinCacheable)
	}
	g, err := c.Lookup("gemini-2.5-pro")
	require.NoError(t, err)
	if g.Input != 1.25 || g.CacheWrite5m != 1.25 || g.CacheWrite1h != 1.25 || g.CacheRead != 0.3125 || g.Window != 1048576 {
		t.Errorf("extend: gemini = %+v", g)
	}
	if _, err := c.Lookup("dall-e-3"); err == nil {
		t.Errorf("dall-e-3 has no per-token price and should have been skipped")
	}
}

func TestLoadLiteLLMErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"not object", `[1,2]`, `p.json:1: not a LiteLLM price file`},
		{"bad type", `{"m1": {"input_cost_per_token": "3e-6", "output_cost_per_token": 1e-5}}`, `p.json:1: model "m1": input_cost_per_token: want a float64, got string`},
		{"negative", `{"m2": {"input_cost_per_token": -1, "output_cost_per_token": 1e-5}}`, `p.json:1: model "m2": input_cost_per_token: -1 is not a price`},
		{"half", `{"m3": {"input_cost_per_token": 1e-6}}`, `p.json:1: model "m3": output_cost_per_token: missing`},
		{"entry not object", `{"m4": 3}`, `p.json:1: model "m4": entry: want a JSON object`},
		// Issue 10: a price of 1e303 printed $NaN with exit 0.
		{"implausible price", `{"m5": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e303}}`, `p.json:1: model "m5": output_cost_per_token: 1e+303 USD per token is not a plausible price`},
		{"implausible size", `{"m6": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5, "max_input_tokens": 1e300}}`, `p.json:1: model "m6": max_input_tokens: 1e+300 is not a plausible size`},
		{"overflowing number", `{"m7": {"input_cost_per_token": 1e999, "output_cost_per_token": 1e-5}}`, `p.json:1: model "m7": input_cost_per_token: want a float64, got number 1e999`},
		// Issue 27: what is refused names its file and line; a key twice
		// was the last one, in silence.
		{"line", "{\n\"ok\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 1e-6},\n\n\"m8\": {\"input_cost_per_token\": -1,\n \"output_cost_per_token\": 1e-5}}", `p.json:4: model "m8": input_cost_per_token: -1`},
		{"twice", "{\"m9\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 1e-6},\n\"m9\": {\"input_cost_per_token\": 1e-3, \"output_cost_per_token\": 1e-3}}", `p.json:2: model "m9": given twice (first at line 1)`},
		{"syntax", "{\"m10\": {\"input_cost_per_token\": 1e-6,\n\"output_cost_per_token\" 1e-6}}", `p.json:2: not a LiteLLM price file (want a JSON object of models): invalid character '1' after object key`},
		{"trailing", "{}\n{}", `p.json:2: not a LiteLLM price file (want a JSON object of models): more after the object`},
		{"truncated", "{\"m11\": {\n", `p.json:2: not a LiteLLM price file (want a JSON object of models): unexpected end of file`},
	}
	for _, tc := range cases {
		c := Default()
		err := c.LoadLiteLLM(strings.NewReader(tc.in), "p.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	// A bad file changes nothing.
	c := Default()
	in := `{"claude-opus-4-6": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}, "zz": {"input_cost_per_token": -1, "output_cost_per_token": 1}}`
	if err := c.LoadLiteLLM(strings.NewReader(in), "p.json"); err == nil {
		t.Fatal("want an error")
	}
	if p, _ := c.Lookup("claude-opus-4-6"); p.Input != 5 {
		t.Errorf("a rejected file changed the card: opus input = %v", p.Input)
	}
}

// TestMinCacheable pins each current Anthropic model's minimum cacheable
// prefix to its source: the prompt-caching page (4096 for Opus 4.5/4.6
// and Haiku 4.5; 1024 for Sonnet 4.5, Opus 4.1/4; 2048 for Haiku 3.5/3, as
// quoted in anthropic-sdk-python#1194), the measured 2048 for Sonnet 4.6
// (same issue; the page says 1024: kept, see DESIGN.md), and the later
// snapshots for Opus 4.7 (2048), Opus 4.8 (1024) and Opus 5 (512).
func TestMinCacheable(t *testing.T) {
	c := Default()
	for _, tt := range []struct {
		model string
		want  int
	}{
		{"claude-opus-4-6", 4096}, {"claude-opus-4-5", 4096}, {"claude-haiku-4-5", 4096},
		{"claude-sonnet-4-5", 1024}, {"claude-sonnet-4-6", 2048}, {"claude-opus-4-1", 1024},
		{"claude-opus-4", 1024}, {"claude-3-5-haiku", 2048}, {"claude-3-haiku", 2048},
		{"claude-opus-4-7", 2048}, {"claude-opus-4-8", 1024}, {"claude-opus-5", 512},
	} {
		p, err := c.Lookup(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if p.MinCacheable != tt.want {
			t.Errorf("%s: min cacheable %d, want %d", tt.model, p.MinCacheable, tt.want)
		}
	}
}

// TestSnapshotBehindRates: the embedded LiteLLM snapshot prices what
// rates.json does not (OpenAI's GPT-5.6 family, with its priced cache
// writes), and never overrides a hand-checked entry.
func TestSnapshotBehindRates(t *testing.T) {
	info := Snapshot()
	require.Equal(t, "2026-09-22", info.Date)
	require.Contains(t, info.Source, "ccusage 20.0.24")
	require.Greater(t, info.Models, 500)

	c := Default()
	p, err := c.Lookup("gpt-5.6-sol")
	require.NoError(t, err)
	require.Equal(t, Price{Model: "gpt-5.6-sol", Provider: "openai", Input: 4, Output: 20, CacheWrite5m: 5, CacheWrite1h: 5,
		CacheRead: 0.4, Window: 922000, MinCacheable: 1024, Source: "LiteLLM snapshot (litellm.json)", Date: "2026-09-22"}, p)
	for _, m := range []string{"gpt-5.6-luna", "gpt-5.6-terra", "gpt-5.3-codex", "azure/gpt-5.6", "claude-sonnet-5", "gpt-4.1-mini-2025-04-14"} {
		_, err := c.Lookup(m)
		require.NoError(t, err, m)
	}
	// rates.json wins where both have the model.
	p, err = c.Lookup("claude-opus-4-6")
	require.NoError(t, err)
	require.NotContains(t, p.Source, "LiteLLM snapshot")
	require.Equal(t, 4096, p.MinCacheable) // from rates.json; LiteLLM has none
	// A --prices file overrides both.
	require.NoError(t, c.LoadLiteLLM(strings.NewReader(`{"gpt-5.6-sol":{"input_cost_per_token":1e-6,"output_cost_per_token":2e-6}}`), "x.json"))
	p, err = c.Lookup("gpt-5.6-sol")
	require.NoError(t, err)
	require.Equal(t, 1.0, p.Input)
	_, err = c.Lookup("no-such-model-9")
	require.ErrorContains(t, err, `"no-such-model-9"`)
}

// Long-context pricing (Anthropic pricing page, "Long context pricing";
// LiteLLM's *_above_200k_tokens rates): a Sonnet 4.5 request past 200K
// prompt tokens bills every token at the premium rates; at 200K it does
// not. The 1M window is accepted only when asked for.
func TestLongContext(t *testing.T) {
	p, err := Default().Lookup("claude-sonnet-4-5-20250929")
	if err != nil {
		t.Fatal(err)
	}
	at := traces.Usage{Input: 1000, CacheWrite5m: 9000, CacheRead: 190000, Output: 1000}
	if got, want := p.Cost(at), (1000*3+9000*3.75+190000*0.3+1000*15)/1e6; math.Abs(got-want) > 1e-9 {
		t.Errorf("200K prompt: $%v, want $%v (standard rates)", got, want)
	}
	past := traces.Usage{Input: 1000, CacheWrite5m: 9000, CacheWrite1h: 1000, CacheRead: 240000, Output: 1000}
	want := (1000*6 + 9000*7.5 + 1000*12 + 240000*0.6 + 1000*22.5) / 1e6
	if got := p.Cost(past); math.Abs(got-want) > 1e-9 {
		t.Errorf("251K prompt: $%v, want $%v (long-context rates)", got, want)
	}
	if c := p.Classes(past); math.Abs(c.CacheRead-0.144) > 1e-9 {
		t.Errorf("251K prompt: reads $%v, want $0.144", c.CacheRead)
	}
	for _, tt := range []struct {
		model       string
		asked, want int
	}{
		{"claude-sonnet-4-5", 0, 200000},
		{"claude-sonnet-4-5", 1000000, 1000000},
		{"claude-opus-4-6", 1000000, 1000000},
		{"claude-opus-4-8", 1000000, 1000000},
		{"claude-opus-4-6", 0, 200000},
		{"claude-opus-4-1", 1000000, 200000},
	} {
		p, err := Default().Lookup(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.WindowFor(tt.asked); got != tt.want {
			t.Errorf("%s asking %d: window %d, want %d", tt.model, tt.asked, got, tt.want)
		}
		if p.LongContext != nil && tt.model != "claude-sonnet-4-5" {
			t.Errorf("%s: long-context premium, want none (1M at standard rates)", tt.model)
		}
	}
}

package pricing

import (
	"github.com/ctxsim/ctxsim/traces"
)

// A Price is one model's rate card entry. Rates are USD per million tokens.
type Price struct {
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Input is the rate of uncached prompt tokens.
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheWrite5m and CacheWrite1h are the rates of cache writes of each
	// tier; CacheRead of cache hits. A provider with free writes (OpenAI
	// before GPT-5.6) has CacheWrite5m = Input.
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
	// Window is the context window in tokens; MaxOutput the largest output.
	Window    int `json:"window"`
	MaxOutput int `json:"max_output,omitempty"`
	// MaxWindow is the window of the model's 1M-context option (0: none):
	// a request that asks for it may be that long.
	MaxWindow int `json:"max_window,omitempty"`
	// LongContext, when set, prices a request whose prompt exceeds
	// LongContext.Above tokens: every token of it, input and output, is
	// billed at those rates ("Long context pricing" on the Anthropic
	// pricing page; LiteLLM's *_above_200k_tokens rates).
	LongContext *LongContext `json:"long_context,omitempty"`
	// MinCacheable is the shortest prefix the provider caches.
	MinCacheable int `json:"min_cacheable"`
	// StoragePerHour is the storage rate of an explicit cache, USD per
	// million tokens per hour (Gemini's context caching); 0 when storage is
	// free. Gemini rows fold it into their write rates: a write of tier T
	// costs Input + CacheRead + StoragePerHour × T.
	StoragePerHour float64 `json:"storage_per_mtok_hour,omitempty"`
	// Source and Date say where the numbers come from.
	Source string `json:"source"`
	Date   string `json:"date"`
}

// LongContext are the rates of a request past Above prompt tokens.
type LongContext struct {
	Above        int     `json:"above"`
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// WindowFor is the largest prompt the model accepts for a request that
// asked for window tokens (0: the default): Window, or up to MaxWindow
// with the long-context option.
func (p Price) WindowFor(window int) int {
	if window > p.Window && p.MaxWindow > p.Window {
		return min(window, p.MaxWindow)
	}
	return p.Window
}

// rates is p with the long-context rates in place when u's prompt is past
// their threshold.
func (p Price) rates(u traces.Usage) Price {
	if lc := p.LongContext; lc != nil && u.Prompt() > int64(lc.Above) {
		p.Input, p.Output, p.CacheWrite5m, p.CacheWrite1h, p.CacheRead = lc.Input, lc.Output, lc.CacheWrite5m, lc.CacheWrite1h, lc.CacheRead
	}
	return p
}

// Cost is the price of u in USD.
func (p Price) Cost(u traces.Usage) float64 {
	p = p.rates(u)
	return (float64(u.Input)*p.Input +
		float64(u.CacheWrite5m)*p.CacheWrite5m +
		float64(u.CacheWrite1h)*p.CacheWrite1h +
		float64(u.CacheRead)*p.CacheRead +
		float64(u.Output)*p.Output) / 1e6
}

// ClassCost is the cost of u split by token class.
type ClassCost struct {
	Input        float64 `json:"input"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
	Output       float64 `json:"output"`
}

// Classes is the cost of u by token class.
func (p Price) Classes(u traces.Usage) ClassCost {
	p = p.rates(u)
	return ClassCost{
		Input:        float64(u.Input) * p.Input / 1e6,
		CacheWrite5m: float64(u.CacheWrite5m) * p.CacheWrite5m / 1e6,
		CacheWrite1h: float64(u.CacheWrite1h) * p.CacheWrite1h / 1e6,
		CacheRead:    float64(u.CacheRead) * p.CacheRead / 1e6,
		Output:       float64(u.Output) * p.Output / 1e6,
	}
}

// Add returns the class-wise sum.
func (c ClassCost) Add(o ClassCost) ClassCost {
	return ClassCost{c.Input + o.Input, c.CacheWrite5m + o.CacheWrite5m, c.CacheWrite1h + o.CacheWrite1h, c.CacheRead + o.CacheRead, c.Output + o.Output}
}

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

// Cost is the price of u in USD.
func (p Price) Cost(u traces.Usage) float64 {
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

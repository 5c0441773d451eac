// Package pricing owns rate cards and the cost of usage.
//
// Typical steps:
//
//	card := pricing.Default()                    // the embedded rates.json
//	err := card.LoadLiteLLM(f, "prices.json")    // optional: override or extend
//	p, err := card.Lookup("claude-opus-4-6[1m]") // normalized id, or an error
//	usd := p.Cost(usage)                         // or p.Classes(usage) by class
//
// rates.json holds Claude, OpenAI and DeepSeek models (USD per million
// tokens: input, output, 5m and 1h cache writes, cache read; window, max
// output, minimum cacheable prefix), each entry with its source and date.
// Providers with free cache writes have write rates equal to input.
//
// Lookup tries the exact id, then Normalize's form (no provider prefix,
// date, version or "[1m]" tag). An unknown model is an error naming the
// model and how to price it (--prices FILE), never a silent $0.
//
// Simplifications: one price per model. Long-context tiers (Anthropic's
// 1M-context beta above 200K prompt tokens, GPT-5.5 above 272K) and
// DeepSeek's peak-hour rates are not modelled, so such calls are
// under-priced.
package pricing

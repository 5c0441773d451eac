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
// Behind rates.json sits litellm.json, a snapshot of LiteLLM's
// model_prices_and_context_window.json (Snapshot says which): it prices
// every model ccusage 20.0.24 prices from LiteLLM (~600 ids: Claude, the
// OpenAI families through GPT-5.6 and GPT-6, Bedrock, Azure, OpenRouter,
// Z.ai), so a model missing from rates.json is priced as ccusage prices it.
// It is ccusage's own trimmed copy, extracted from the ccusage binary
// (npm @ccusage/ccusage-linux-x64@20.0.24): its short keys expanded to
// LiteLLM's field names, litellm_provider inferred from the key, and an
// "_about" entry with the source and date. To refresh it from LiteLLM's
// file itself, keep the chat entries with per-token prices, e.g.
//
//	jq 'with_entries(select(.value.mode == "chat" and .value.input_cost_per_token != null))
//	    | .["_about"] = {source: "…", date: "YYYY-MM-DD"}' model_prices_and_context_window.json
//
// A --prices file (LoadLiteLLM) overrides both.
//
// Lookup tries the exact id, then Normalize's form (no provider prefix,
// date, version or "[1m]" tag), in rates.json and then in the snapshot. An
// unknown model is an error naming the model and how to price it (--prices
// FILE); callers that report cost price such calls at $0 with a warning
// naming the model, never silently.
//
// A rates.json entry may carry max_window, the window of the model's
// 1M-context option (Price.WindowFor), and long_context, the rates every
// token of a request is billed at once its prompt passes long_context.above
// (Anthropic's Sonnet 4/4.5 above 200K).
//
// Simplifications: long-context tiers come only from rates.json: the
// snapshot's *_above_200k_tokens fields are not read, and GPT-5.5's tier
// above 272K and DeepSeek's peak-hour rates are not modelled, so such
// calls are under-priced.
package pricing

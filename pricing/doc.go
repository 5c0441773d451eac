// Package pricing owns rate cards and the cost of usage.
//
// Default returns the embedded card (Claude, OpenAI and DeepSeek models, each
// entry with its source and date). A LiteLLM
// model_prices_and_context_window.json file overrides or extends it. Lookup
// of an unknown model is an error naming the model and how to price it,
// never a silent $0.
package pricing

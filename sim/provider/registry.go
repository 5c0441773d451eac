package provider

import (
	"fmt"
	"slices"
	"strings"
)

// Options configures any provider by name (ByName). Common applies to all;
// the per-provider fields carry the rest, and their own Common is filled
// from the top-level one when left zero.
type Options struct {
	Common
	Anthropic AnthropicOptions
	OpenAI    OpenAIOptions
	DeepSeek  DeepSeekOptions
	Gemini    GeminiOptions
	VLLM      VLLMOptions
}

func (o Options) common(c Common) Common {
	if c.Prices == nil {
		c.Prices = o.Prices
	}
	if c.Latency == nil {
		c.Latency = o.Latency
	}
	if c.Blocks == 0 {
		c.Blocks = o.Blocks
	}
	return c
}

var constructors = map[string]func(o Options) (Provider, error){
	"anthropic": func(o Options) (Provider, error) {
		a := o.Anthropic
		a.Common = o.common(a.Common)
		return NewAnthropic(a), nil
	},
	"openai": func(o Options) (Provider, error) {
		a := o.OpenAI
		a.Common = o.common(a.Common)
		return NewOpenAI(a)
	},
	"deepseek": func(o Options) (Provider, error) {
		a := o.DeepSeek
		a.Common = o.common(a.Common)
		return NewDeepSeek(a), nil
	},
	"gemini": func(o Options) (Provider, error) {
		a := o.Gemini
		a.Common = o.common(a.Common)
		return NewGemini(a)
	},
	"vllm": func(o Options) (Provider, error) {
		a := o.VLLM
		a.Common = o.common(a.Common)
		return NewVLLM(a)
	},
}

// ByName returns a new provider instance (a cold cache: one per tenant).
func ByName(name string, o Options) (Provider, error) {
	f, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("provider: unknown provider %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(o)
}

// Names lists the providers ByName knows, sorted.
func Names() []string {
	out := make([]string, 0, len(constructors))
	for n := range constructors {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

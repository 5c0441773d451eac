package chatlog

import (
	"github.com/ctxsim/ctxsim/traces"
)

// OpenAIUsage is the usage object of a chat-completions response, with the
// fields proxies add (OpenRouter and LiteLLM expose Anthropic's names at the
// top level).
type OpenAIUsage struct {
	PromptTokens        *traces.Count `json:"prompt_tokens"`
	CompletionTokens    traces.Count  `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     traces.Count `json:"cached_tokens"`
		CacheWriteTokens traces.Count `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CacheReadInputTokens     traces.Count `json:"cache_read_input_tokens"`
	CacheCreationInputTokens traces.Count `json:"cache_creation_input_tokens"`
}

// Usage converts to the additive native form, checked by
// traces.CheckOpenAI (warn gets what it resolved). OpenAI's prompt_tokens
// includes the cached tokens (Anthropic's input_tokens does not), so
// Input = prompt − read − write (hermes' normalize_usage, reference
// hermes.md §2.5). Writes are billed as 5-minute writes: OpenAI-style
// providers that report writes do not say the TTL. ok is false when the log
// has no prompt_tokens.
func (u *OpenAIUsage) Usage(warn func(string)) (traces.Usage, bool) {
	if u == nil || u.PromptTokens == nil {
		return traces.Usage{}, false
	}
	read := u.PromptTokensDetails.CachedTokens
	if read == 0 {
		read = u.CacheReadInputTokens
	}
	write := u.PromptTokensDetails.CacheWriteTokens
	if write == 0 {
		write = u.CacheCreationInputTokens
	}
	return traces.CheckOpenAI(float64(*u.PromptTokens), float64(read), float64(write), float64(u.CompletionTokens), warn), true
}

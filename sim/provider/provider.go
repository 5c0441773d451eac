package provider

import (
	"errors"
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Provider bills frozen requests the way a real service does. It keeps its
// own cache state; use one instance per simulated tenant (account). Send is
// called with non-decreasing virtual times.
type Provider interface {
	// Name identifies the provider model ("anthropic", "openai", ...).
	Name() string
	// Send bills req at virtual time now. An error is what the API would
	// answer instead of a response (an *APIError).
	Send(now time.Time, req *prompt.Request) (Response, error)
}

// A Releaser is a provider with state worth reusing once its caller is
// done with it (Anthropic's cache maps): Release hands it back, and the
// provider must not be used after.
type Releaser interface{ Release() }

// Release releases p if it is a Releaser; a caller that made p calls it
// when p's run is over. It changes no answer of any provider.
func Release(p Provider) {
	if r, ok := p.(Releaser); ok {
		r.Release()
	}
}

// A Response is what a call returned: usage in the additive form and timing.
type Response struct {
	Usage traces.Usage
	// TTFT is the time to the first token; Decode the time to stream the
	// output. The cache entry of the request exists from now+TTFT.
	TTFT, Decode time.Duration
	// Wire is the usage as the provider's API reports it, for providers
	// whose convention is not additive (OpenAI, DeepSeek, vLLM) and for
	// server-side edits; zero otherwise.
	Wire WireUsage
	// Miss says why the call did not read what the conversation's previous
	// call cached, when it did not.
	Miss Miss
	// KeptAlive is true when the request's KeepAlive observation made
	// live a prefix this provider had let expire (or never had).
	KeptAlive bool
}

// implicitResponse is the response of a provider that caches without
// markers (OpenAI, DeepSeek, vLLM): cached of the prompt's tokens read from
// cache, the rest input, reported the OpenAI way (prompt tokens include the
// cached ones).
func implicitResponse(req *prompt.Request, cached int, ttft, decode time.Duration) Response {
	return Response{
		Usage: traces.Usage{Input: int64(req.Total - cached), CacheRead: int64(cached), Output: int64(req.Output)},
		TTFT:  ttft, Decode: decode,
		Wire: WireUsage{PromptTokens: int64(req.Total), CachedTokens: int64(cached), CompletionTokens: int64(req.Output)},
	}
}

// A Miss is the part of a conversation's cached prefix a call did not read,
// and why: the figure "which change broke my cache" needs.
type Miss struct {
	Reason string `json:"reason,omitempty"`
	// Tokens is how much of what the conversation's previous call cached
	// this call did not read (and so wrote or sent uncached again).
	Tokens int `json:"tokens,omitempty"`
}

// Miss reasons.
const (
	// MissExpired: the prefix was sent unchanged but its entry had expired
	// (an idle gap past the TTL).
	MissExpired = "expired"
	// MissRewrite: the prefix changed before the previous call's last
	// breakpoint (a compaction, a prune, an edit, a floor change).
	MissRewrite = "rewrite"
	// MissLookback: the prefix was unchanged and its entry alive, but no
	// breakpoint of this call was within 20 blocks of it.
	MissLookback = "lookback"
	// MissObserved: the log shows the provider serving this call less of
	// the prefix than was cached and alive, with nothing in the transcript
	// to explain it (an observed re-send; see prompt.Request.ReadLimit).
	MissObserved = "observed"
	// MissModel: the conversation switched model; caches are per model.
	MissModel = "model"
	// MissThinking: the API dropped an earlier turn's thinking blocks at a
	// new user turn (its default for the model, unless the harness asks
	// to keep them: prompt.Builder.KeepThinking), which changed the
	// prefix from the first dropped block (the engine names it; the
	// provider sees a rewrite).
	MissThinking = "thinking"
)

// WireUsage is a response's usage in the provider's own convention: OpenAI
// reports cached tokens inside prompt tokens, DeepSeek hit + miss = prompt,
// vLLM num_cached_tokens. Usage (additive) is what billing reads.
type WireUsage struct {
	PromptTokens     int64 `json:"prompt_tokens,omitempty"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	CompletionTokens int64 `json:"completion_tokens,omitempty"`
	// ClearedInputTokens is what Anthropic's server-side context editing
	// removed from the prompt before billing.
	ClearedInputTokens int64 `json:"cleared_input_tokens,omitempty"`
}

// Latency is the call's whole duration.
func (r Response) Latency() time.Duration { return r.TTFT + r.Decode }

// An APIError is a request the provider rejected.
type APIError struct {
	Status int
	Kind   error // one of the Err values below
	Msg    string
}

func (e *APIError) Error() string { return fmt.Sprintf("provider: %d: %s", e.Status, e.Msg) }

func (e *APIError) Unwrap() error { return e.Kind }

// Kinds of API errors.
var (
	ErrContextOverflow    = errors.New("prompt is too long")
	ErrTooManyBreakpoints = errors.New("too many cache_control breakpoints")
	ErrTTLOrder           = errors.New("1h cache_control after a 5m one")
	ErrNotCacheable       = errors.New("cache_control on a block that cannot carry it")
	ErrInvalidTTL         = errors.New("cache_control ttl must be 5m or 1h")
	ErrTransient          = errors.New("transient provider error")
)

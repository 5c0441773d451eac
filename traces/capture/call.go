package capture

import (
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// APIs a captured call was made on.
const (
	Anthropic       = "anthropic"        // POST /v1/messages
	OpenAIResponses = "openai-responses" // POST /v1/responses
	OpenAIChat      = "openai-chat"      // POST /v1/chat/completions
)

// Sections of a request a cache_control mark can sit in, in the order the
// Anthropic API renders them.
const (
	SecTools    = "tools"
	SecSystem   = "system"
	SecMessages = "messages"
)

// A Mark is one cache_control marker as the request carried it: on a tool
// (Index), a system block (Index), or block Block of message Msg.
type Mark struct {
	Section string
	Index   int // tool or system block index; message index for SecMessages
	Block   int // block index in the message (SecMessages only)
	TTL     string
	// Scope is the marker's scope ("global" shares the entry across
	// accounts' sessions under Claude Code's prompt-caching-scope beta),
	// "" when not given.
	Scope string
}

// A Message is one message of a request, its blocks as traces blocks.
type Message struct {
	// Role is "user", "assistant" or "system" (a mid-conversation system
	// message) on the Anthropic wire; OpenAI's developer messages are
	// "system" too.
	Role   string
	Blocks []traces.Block
}

// A Call is one captured model call: the exact request and what the
// provider answered. Fields the request did not carry are zero.
type Call struct {
	File string
	Line int // where the pair starts in File
	// Time is when the request was sent (claude-trace's request timestamp;
	// claude-tap keeps none, so its response's Date header, to the
	// second).
	Time   time.Time
	API    string
	Status int
	Model  string
	// Stream says whether the response was streamed (SSE).
	Stream bool
	Tools  []traces.Block // tool_schema blocks, in request order
	System []traces.Block // system blocks (Anthropic's system, OpenAI's instructions)
	// BillingHeader is Claude Code's x-anthropic-billing-header system
	// block, which the API does not cache as prompt (see billingHeader);
	// Marks index System without it.
	BillingHeader string
	Msgs          []Message
	Marks         []Mark
	// Automatic is a top-level cache_control's TTL ("" when absent).
	Automatic string
	// ToolChoice, Thinking and ContextManagement are the request settings
	// as sent, compact JSON ("" when absent).
	ToolChoice, Thinking, ContextManagement string
	// Key is what names the conversation: OpenAI's prompt_cache_key, or
	// Claude Code's session header.
	Key string
	// ResponseID is the response's id; Previous is OpenAI's
	// previous_response_id, whose input and output this request's input
	// continues (Responses API over a WebSocket).
	ResponseID, Previous string
	// Output is the response's content (what the next request repeats).
	Output []traces.Block
	// Usage is the bill; nil when the response carried none (an error,
	// a cut stream).
	Usage *traces.Usage
	// Error is the upstream's error message for a failed call.
	Error string
	// Cut says the capture tool shortened a string of the request
	// (WarnCut): the request as sent is not all in the file.
	Cut bool
	// created is the response's own creation time (Responses API
	// created_at), the call's time when the capture keeps no other.
	created time.Time
}

// FormatName is the format's name, as --from takes it.
const FormatName = "capture"

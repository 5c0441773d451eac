package capture

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
)

// oItem is a Responses API input or output item, and a chat message.
type oItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	CallID           string          `json:"call_id"`
	Output           json.RawMessage `json:"output"`
	EncryptedContent string          `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

type oRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions"`
	Input           json.RawMessage   `json:"input"`
	Messages        []oItem           `json:"messages"`
	Tools           []json.RawMessage `json:"tools"`
	ToolChoice      json.RawMessage   `json:"tool_choice"`
	Reasoning       json.RawMessage   `json:"reasoning"`
	ReasoningEffort string            `json:"reasoning_effort"`
	PromptCacheKey  string            `json:"prompt_cache_key"`
	Previous        string            `json:"previous_response_id"`
	Stream          bool              `json:"stream"`
}

func (c *Call) openAIRequest(body []byte) error {
	var r oRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	c.Model, c.Stream, c.Previous = r.Model, r.Stream, r.Previous
	if r.PromptCacheKey != "" {
		c.Key = r.PromptCacheKey
	}
	c.ToolChoice, c.Thinking = compact(r.ToolChoice), compact(r.Reasoning)
	if c.Thinking == "" && r.ReasoningEffort != "" {
		c.Thinking = r.ReasoningEffort
	}
	if r.Instructions != "" {
		c.System = append(c.System, traces.Block{Kind: traces.System, Text: r.Instructions})
	}
	for _, raw := range r.Tools {
		var t struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &t) != nil {
			return errBadShape
		}
		name := firstOf(t.Name, t.Function.Name, t.Type)
		c.Tools = append(c.Tools, traces.Block{Kind: traces.ToolSchema, Name: name, Input: withoutCacheControl(raw)})
	}
	items := r.Messages
	if c.API == OpenAIResponses {
		in := bytes.TrimSpace(r.Input)
		switch {
		case len(in) > 0 && in[0] == '"':
			var s string
			if err := json.Unmarshal(in, &s); err != nil {
				return err
			}
			items = []oItem{{Type: "message", Role: "user", Content: mustJSON(s)}}
		case len(in) > 0 && in[0] == '[':
			if err := json.Unmarshal(in, &items); err != nil {
				return err
			}
		}
	}
	c.Msgs = appendItems(nil, items)
	return nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// appendItems adds items to msgs as messages: consecutive items of one
// role join one message (a Responses API turn is several items).
func appendItems(msgs []Message, items []oItem) []Message {
	add := func(role string, b ...traces.Block) {
		if len(b) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role && role != "system" {
			msgs[n-1].Blocks = append(msgs[n-1].Blocks, b...)
			return
		}
		msgs = append(msgs, Message{Role: role, Blocks: b})
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			role := it.Role
			if role == "developer" || role == "system" {
				role = "system"
			}
			if role == "tool" {
				add("user", traces.Block{Kind: traces.ToolResultBlock, ID: it.ToolCallID, Text: contentText(it.Content)})
				continue
			}
			kind := traces.Text
			if role == "system" {
				kind = traces.System
			}
			add(role, contentBlocks(it.Content, kind)...)
			for _, tc := range it.ToolCalls {
				add("assistant", traces.Block{Kind: traces.ToolUse, ID: tc.ID, Name: tc.Function.Name, Input: chatlog.Arguments(tc.Function.Arguments)})
			}
		case "function_call", "custom_tool_call", "local_shell_call", "tool_search_call":
			args := it.Arguments
			if len(args) == 0 {
				args = it.Input
			}
			if len(args) == 0 {
				args = mustJSON(it)
			}
			add("assistant", traces.Block{Kind: traces.ToolUse, ID: firstOf(it.CallID, it.ID, it.Type), Name: firstOf(it.Name, it.Type), Input: chatlog.Arguments(args)})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output":
			add("user", traces.Block{Kind: traces.ToolResultBlock, ID: firstOf(it.CallID, it.ID, it.Type), Text: contentText(it.Output)})
		case "reasoning":
			var sum strings.Builder
			for _, s := range it.Summary {
				sum.WriteString(s.Text)
			}
			b := traces.Block{Kind: traces.Thinking, Text: sum.String()}
			if it.EncryptedContent != "" {
				// Opaque: sized from its length as the Codex importer
				// sizes encrypted items (about 3 characters of base64 a
				// token is an upper bound; the bills size it exactly).
				b = traces.Block{Kind: traces.Thinking, Name: "encrypted:" + hash16(it.EncryptedContent), Tokens: max(1, len(it.EncryptedContent)/4)}
			}
			add("assistant", b)
		default:
			// web_search_call, image_generation_call and newer items:
			// their JSON is what the model sees again.
			add("assistant", traces.Block{Kind: traces.Text, Name: it.Type, Text: compact(mustJSON(it))})
		}
	}
	return msgs
}

// contentBlocks reads message content: a string or a list of parts.
func contentBlocks(raw json.RawMessage, kind traces.BlockKind) []traces.Block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return []traces.Block{{Kind: kind, Text: s}}
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return []traces.Block{{Kind: kind, Text: compact(raw)}}
	}
	var out []traces.Block
	for _, p := range parts {
		switch p.Type {
		case "input_image", "image_url", "image":
			out = append(out, traces.Block{Kind: traces.Image, Name: "image:" + hash16(compact(p.ImageURL)), Tokens: chatlog.ImageTokens})
		default:
			out = append(out, traces.Block{Kind: kind, Text: p.Text})
		}
	}
	return out
}

// contentText is a tool output as text: a string, or its parts' text.
func contentText(raw json.RawMessage) string {
	var sb strings.Builder
	for _, b := range contentBlocks(raw, traces.Text) {
		if b.Text != "" {
			sb.WriteString(b.Text)
		} else {
			sb.WriteString(b.Name)
		}
	}
	return sb.String()
}

type rUsage struct {
	Input   *traces.Count `json:"input_tokens"`
	Output  traces.Count  `json:"output_tokens"`
	Details struct {
		Cached traces.Count `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (c *Call) responsesResponse(body []byte, warn func(string)) {
	var r struct {
		ID        string  `json:"id"`
		CreatedAt float64 `json:"created_at"`
		Output    []oItem `json:"output"`
		Usage     *rUsage `json:"usage"`
		Error     *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil {
		return
	}
	c.ResponseID = r.ID
	if r.CreatedAt > 0 && r.CreatedAt < 1e11 {
		c.created = time.Unix(int64(r.CreatedAt), 0).UTC()
	}
	if r.Error != nil && r.Error.Message != "" {
		c.Error = r.Error.Message
	}
	for _, m := range appendItems(nil, r.Output) {
		c.Output = append(c.Output, m.Blocks...)
	}
	if r.Usage != nil && r.Usage.Input != nil {
		u := traces.CheckOpenAI(float64(*r.Usage.Input), float64(r.Usage.Details.Cached), 0, float64(r.Usage.Output), warn)
		c.Usage = &u
	}
}

type chatResp struct {
	ID      string `json:"id"`
	Choices []struct {
		Message *oItem `json:"message"`
		Delta   *struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *chatlog.OpenAIUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (c *Call) chatUsage(u *chatlog.OpenAIUsage, warn func(string)) {
	if us, ok := u.Usage(warn); ok {
		c.Usage = &us
	}
}

func (c *Call) chatResponse(body []byte, warn func(string)) {
	var r chatResp
	if json.Unmarshal(body, &r) != nil {
		return
	}
	c.ResponseID = r.ID
	if r.Error != nil {
		c.Error = r.Error.Message
	}
	if len(r.Choices) > 0 && r.Choices[0].Message != nil {
		m := *r.Choices[0].Message
		m.Role = "assistant"
		for _, msg := range appendItems(nil, []oItem{m}) {
			c.Output = append(c.Output, msg.Blocks...)
		}
	}
	c.chatUsage(r.Usage, warn)
}

// chatSSE reassembles streamed chat-completion chunks; the usage comes in
// the last chunk (stream_options.include_usage).
func (c *Call) chatSSE(raw string, warn func(string)) {
	var text strings.Builder
	type call struct{ id, name, args string }
	var calls []call
	for _, data := range sseEvents(raw) {
		var r chatResp
		if json.Unmarshal([]byte(data), &r) != nil {
			continue
		}
		if c.ResponseID == "" {
			c.ResponseID = r.ID
		}
		if r.Error != nil {
			c.Error = r.Error.Message
		}
		if r.Usage != nil {
			c.chatUsage(r.Usage, warn)
		}
		for _, ch := range r.Choices {
			if ch.Delta == nil {
				continue
			}
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for tc.Index >= len(calls) {
					calls = append(calls, call{})
				}
				k := &calls[tc.Index]
				k.id += tc.ID
				k.name += tc.Function.Name
				k.args += tc.Function.Arguments
			}
		}
	}
	if text.Len() > 0 {
		c.Output = append(c.Output, traces.Block{Kind: traces.Text, Text: text.String()})
	}
	for _, k := range calls {
		c.Output = append(c.Output, traces.Block{Kind: traces.ToolUse, ID: k.id, Name: k.name, Input: chatlog.Arguments(json.RawMessage(mustJSON(k.args)))})
	}
}

package capture

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
)

type cacheControl struct {
	Type  string `json:"type"`
	TTL   string `json:"ttl"`
	Scope string `json:"scope"`
}

// ttl is the marker's tier as the API reads it: 5m unless 1h is asked.
func (cc *cacheControl) ttl() string {
	if cc.TTL == "1h" {
		return "1h"
	}
	return "5m"
}

type aBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Source       json.RawMessage `json:"source"`
	CacheControl *cacheControl   `json:"cache_control"`
}

type aTool struct {
	Name         string        `json:"name"`
	CacheControl *cacheControl `json:"cache_control"`
}

type aRequest struct {
	Model    string            `json:"model"`
	System   json.RawMessage   `json:"system"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Thinking          json.RawMessage `json:"thinking"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ContextManagement json.RawMessage `json:"context_management"`
	CacheControl      *cacheControl   `json:"cache_control"`
	Stream            bool            `json:"stream"`
}

// compact is raw as compact JSON, "" for absent or null.
func compact(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// withoutCacheControl is the compact JSON of an object without its
// cache_control key: a tool schema's identity does not include the marker.
func withoutCacheControl(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return compact(raw)
	}
	delete(m, "cache_control")
	b, _ := json.Marshal(m) // sorted keys: a stable identity
	return string(b)
}

func (c *Call) anthropicRequest(body []byte) error {
	var r aRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	c.Model, c.Stream = r.Model, r.Stream
	c.Thinking, c.ToolChoice, c.ContextManagement = compact(r.Thinking), compact(r.ToolChoice), compact(r.ContextManagement)
	if r.CacheControl != nil {
		c.Automatic = r.CacheControl.ttl()
	}
	for i, raw := range r.Tools {
		var t aTool
		if json.Unmarshal(raw, &t) != nil {
			return errBadShape
		}
		c.Tools = append(c.Tools, traces.Block{Kind: traces.ToolSchema, Name: t.Name, Input: withoutCacheControl(raw)})
		if t.CacheControl != nil {
			c.Marks = append(c.Marks, Mark{Section: SecTools, Index: i, TTL: t.CacheControl.ttl(), Scope: t.CacheControl.Scope})
		}
	}
	sys, err := aBlocks(r.System)
	if err != nil {
		return err
	}
	for _, b := range sys {
		if strings.HasPrefix(b.Text, billingHeader) && b.CacheControl == nil {
			c.BillingHeader = b.Text
			continue
		}
		if b.CacheControl != nil {
			c.Marks = append(c.Marks, Mark{Section: SecSystem, Index: len(c.System), TTL: b.CacheControl.ttl(), Scope: b.CacheControl.Scope})
		}
		c.System = append(c.System, traces.Block{Kind: traces.System, Text: b.Text})
	}
	for mi, m := range r.Messages {
		bs, err := aBlocks(m.Content)
		if err != nil {
			return err
		}
		msg := Message{Role: m.Role}
		for bi := range bs {
			msg.Blocks = append(msg.Blocks, bs[bi].block())
			if cc := bs[bi].CacheControl; cc != nil {
				c.Marks = append(c.Marks, Mark{Section: SecMessages, Index: mi, Block: bi, TTL: cc.ttl(), Scope: cc.Scope})
			}
		}
		c.Msgs = append(c.Msgs, msg)
	}
	return nil
}

// billingHeader opens the system block Claude Code 2.1 sends first
// (cc_version, cc_entrypoint and a per-request cch hash). It is not part
// of the cached prompt: its cch changes on every call, yet each call reads
// the whole prefix the call before it wrote (captures trace_claude.json
// packets 3 to 6: cch aec5a, 711a1, f19aa, ..., reads 32720, 38248,
// 44362, 55665, each the previous call's read plus write). So the reader
// keeps it aside (Call.BillingHeader), out of the floor.
const billingHeader = "x-anthropic-billing-header:"

type shapeError struct{}

func (shapeError) Error() string { return "unexpected shape" }

var errBadShape error = shapeError{}

// aBlocks reads content that is a string or a list of blocks.
func aBlocks(raw json.RawMessage) ([]aBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []aBlock{{Type: "text", Text: s}}, nil
	}
	var out []aBlock
	err := json.Unmarshal(raw, &out)
	return out, err
}

// block is b as a traces block. Content the wire shows only opaquely
// (an image, redacted thinking) is sized as chatlog sizes it and named by
// its payload, so the same content sent again is the same block.
func (b *aBlock) block() traces.Block {
	switch b.Type {
	case "text":
		return traces.Block{Kind: traces.Text, Text: b.Text}
	case "thinking":
		return traces.Block{Kind: traces.Thinking, Text: b.Thinking, Name: sigName(b.Signature)}
	case "redacted_thinking":
		return traces.Block{Kind: traces.Thinking, Name: "redacted:" + hash16(b.Data), Tokens: max(1, len(b.Data)/4)}
	case "tool_use", "server_tool_use":
		return traces.Block{Kind: traces.ToolUse, ID: b.ID, Name: b.Name, Input: compact(b.Input)}
	case "tool_result":
		inner, _ := aBlocks(b.Content)
		var text bytes.Buffer
		for _, x := range inner {
			if x.Type == "text" {
				text.WriteString(x.Text)
			} else {
				text.WriteString(compact(x.Source))
			}
		}
		if len(inner) == 0 {
			text.WriteString(compact(b.Content))
		}
		return traces.Block{Kind: traces.ToolResultBlock, ID: b.ToolUseID, Text: text.String(), IsError: b.IsError}
	case "image", "document":
		return traces.Block{Kind: traces.Image, Name: b.Type + ":" + hash16(compact(b.Source)), Tokens: chatlog.ImageTokens}
	}
	// Server tool results and anything newer: their JSON is their content.
	return traces.Block{Kind: traces.Text, Name: b.Type, Text: compact(mustJSON(b))}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func sigName(sig string) string {
	if sig == "" {
		return ""
	}
	return "sig:" + hash16(sig)
}

func hash16(s string) string { return strconv.FormatUint(traces.HashString(s), 16) }

type aUsage struct {
	Input         *traces.Count `json:"input_tokens"`
	CacheCreation *traces.Count `json:"cache_creation_input_tokens"`
	CacheRead     *traces.Count `json:"cache_read_input_tokens"`
	Output        *traces.Count `json:"output_tokens"`
	Split         *struct {
		W5m traces.Count `json:"ephemeral_5m_input_tokens"`
		W1h traces.Count `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// merge takes o's fields where o has them (message_delta carries the
// final counts).
func (u *aUsage) merge(o *aUsage) {
	if o.Input != nil {
		u.Input = o.Input
	}
	if o.CacheCreation != nil {
		u.CacheCreation = o.CacheCreation
	}
	if o.CacheRead != nil {
		u.CacheRead = o.CacheRead
	}
	if o.Output != nil {
		u.Output = o.Output
	}
	if o.Split != nil {
		u.Split = o.Split
	}
}

func val(c *traces.Count) float64 {
	if c == nil {
		return 0
	}
	return float64(*c)
}

func (u *aUsage) usage(warn func(string)) *traces.Usage {
	if u.Input == nil && u.Output == nil && u.CacheRead == nil && u.CacheCreation == nil {
		return nil
	}
	raw := traces.RawAnthropic{Input: val(u.Input), CacheCreation: val(u.CacheCreation), CacheRead: val(u.CacheRead), Output: val(u.Output)}
	if u.Split != nil {
		raw.HasSplit, raw.W5m, raw.W1h = true, float64(u.Split.W5m), float64(u.Split.W1h)
	}
	us := traces.CheckAnthropic(raw, warn)
	return &us
}

type aResponse struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Content []aBlock `json:"content"`
	Usage   *aUsage  `json:"usage"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (c *Call) anthropicResponse(body []byte, warn func(string)) {
	var r aResponse
	if json.Unmarshal(body, &r) != nil {
		return
	}
	c.ResponseID = r.ID
	if r.Error != nil {
		c.Error = r.Error.Message
	}
	for i := range r.Content {
		c.Output = append(c.Output, r.Content[i].block())
	}
	if r.Usage != nil {
		c.Usage = r.Usage.usage(warn)
	}
}

// anthropicSSE reassembles a streamed Messages response: message_start
// (id, usage), content_block_start/delta (the content), message_delta
// (the final usage), error.
func (c *Call) anthropicSSE(raw string, warn func(string)) {
	var u aUsage
	var blocks []aBlock
	var inputs []bytes.Buffer
	for _, data := range sseEvents(raw) {
		var e struct {
			Type    string          `json:"type"`
			Message *aResponse      `json:"message"`
			Index   int             `json:"index"`
			Block   *aBlock         `json:"content_block"`
			Delta   json.RawMessage `json:"delta"`
			Usage   *aUsage         `json:"usage"`
			Error   *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(data), &e) != nil {
			continue
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				c.ResponseID = e.Message.ID
				if e.Message.Usage != nil {
					u.merge(e.Message.Usage)
				}
			}
		case "content_block_start":
			if e.Block != nil && e.Index == len(blocks) {
				b := *e.Block
				if b.Type == "tool_use" || b.Type == "server_tool_use" {
					b.Input = nil
				}
				blocks = append(blocks, b)
				inputs = append(inputs, bytes.Buffer{})
			}
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(blocks) {
				continue
			}
			var d struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
			}
			if json.Unmarshal(e.Delta, &d) != nil {
				continue
			}
			b := &blocks[e.Index]
			b.Text += d.Text
			b.Thinking += d.Thinking
			b.Signature += d.Signature
			inputs[e.Index].WriteString(d.PartialJSON)
		case "message_delta":
			if e.Usage != nil {
				u.merge(e.Usage)
			}
		case "error":
			if e.Error != nil {
				c.Error = e.Error.Message
			}
		}
	}
	for i := range blocks {
		if inputs[i].Len() > 0 {
			blocks[i].Input = inputs[i].Bytes()
		} else if blocks[i].Type == "tool_use" || blocks[i].Type == "server_tool_use" {
			blocks[i].Input = json.RawMessage("{}")
		}
		c.Output = append(c.Output, blocks[i].block())
	}
	c.Usage = u.usage(warn)
}

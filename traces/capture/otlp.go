package capture

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// OTLP JSON (OpenTelemetry's ExportTraceServiceRequest as JSON, what an
// OTLP/HTTP JSON exporter or a collector's file exporter writes):
// resourceSpans[].scopeSpans[].spans[], each model call a span carrying
// the GenAI semantic conventions' attributes: gen_ai.provider.name (or
// the older gen_ai.system), gen_ai.request.model, gen_ai.conversation.id,
// gen_ai.response.id, gen_ai.usage.input_tokens (all input tokens, cached
// ones included), gen_ai.usage.cache_read.input_tokens and
// gen_ai.usage.cache_creation.input_tokens, gen_ai.usage.output_tokens,
// and, where content capture is on, gen_ai.system_instructions,
// gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.tool.definitions (JSON: messages of {role, parts:[{type: text |
// tool_call | tool_call_response, ...}]}). Spans carry no cache_control:
// a replay plans its own markers.

type otlpValue struct {
	StringValue *string                       `json:"stringValue"`
	IntValue    json.RawMessage               `json:"intValue"` // a JSON string or number
	DoubleValue *float64                      `json:"doubleValue"`
	ArrayValue  *struct{ Values []otlpValue } `json:"arrayValue"`
}

type otlpAttr struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

type otlpSpan struct {
	Name       string          `json:"name"`
	Start      json.RawMessage `json:"startTimeUnixNano"`
	Attributes []otlpAttr      `json:"attributes"`
}

type otlpRequest struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []json.RawMessage `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

func (v otlpValue) str() string {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case len(v.IntValue) > 0:
		return strings.Trim(string(v.IntValue), `"`)
	case v.DoubleValue != nil:
		return strconv.FormatFloat(*v.DoubleValue, 'f', -1, 64)
	}
	return ""
}

func (v otlpValue) num() (float64, bool) {
	s := v.str()
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

type genAIPart struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

type genAIMessage struct {
	Role  string      `json:"role"`
	Parts []genAIPart `json:"parts"`
}

func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return compact(raw)
}

func genAIBlocks(parts []genAIPart, kind traces.BlockKind) []traces.Block {
	var out []traces.Block
	for _, p := range parts {
		switch p.Type {
		case "tool_call":
			out = append(out, traces.Block{Kind: traces.ToolUse, ID: p.ID, Name: p.Name, Input: compact(p.Arguments)})
		case "tool_call_response":
			out = append(out, traces.Block{Kind: traces.ToolResultBlock, ID: p.ID, Text: rawText(p.Response)})
		case "reasoning":
			out = append(out, traces.Block{Kind: traces.Thinking, Text: rawText(p.Content)})
		default:
			out = append(out, traces.Block{Kind: kind, Text: rawText(p.Content)})
		}
	}
	return out
}

func genAIMessages(s string) []Message {
	var ms []genAIMessage
	if json.Unmarshal([]byte(s), &ms) != nil {
		return nil
	}
	var out []Message
	for _, m := range ms {
		role := m.Role
		switch role {
		case "tool":
			role = "user"
		case "developer":
			role = "system"
		}
		kind := traces.Text
		if role == "system" {
			kind = traces.System
		}
		out = append(out, Message{Role: role, Blocks: genAIBlocks(m.Parts, kind)})
	}
	return out
}

// otlpCalls reads the model-call spans of an OTLP JSON document: those
// with a gen_ai.usage attribute. base is the document's first line.
func otlpCalls(data []byte, name string, base int, w *traces.Warnings) ([]*Call, error) {
	var req otlpRequest
	if err := json.Unmarshal(data, &req); err != nil {
		se := traces.JSONError(name, data, err)
		se.Line += base - 1
		return nil, se
	}
	var out []*Call
	from := 0 // spans come in file order: each is searched for after the last
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, raw := range ss.Spans {
				var sp otlpSpan
				off := from
				if i := bytes.Index(data[from:], raw); i >= 0 {
					off = from + i
					from = off + len(raw)
				}
				line := base + traces.LineAt(data, int64(off)) - 1
				if json.Unmarshal(raw, &sp) != nil {
					w.Add(name, line, WarnBadBody)
					continue
				}
				if c := otlpCall(&sp, name, line, w); c != nil {
					out = append(out, c)
				}
			}
		}
	}
	return out, nil
}

func otlpCall(sp *otlpSpan, name string, line int, w *traces.Warnings) *Call {
	attrs := map[string]otlpValue{}
	for _, a := range sp.Attributes {
		attrs[a.Key] = a.Value
	}
	in, ok := attrs["gen_ai.usage.input_tokens"].num()
	if !ok {
		return nil // not a model call (a tool or agent span)
	}
	read, _ := attrs["gen_ai.usage.cache_read.input_tokens"].num()
	write, _ := attrs["gen_ai.usage.cache_creation.input_tokens"].num()
	outTok, _ := attrs["gen_ai.usage.output_tokens"].num()
	u := traces.CheckOpenAI(in, read, write, outTok, func(r string) { w.Add(name, line, r) })
	provider := attrs["gen_ai.provider.name"].str()
	if provider == "" {
		provider = attrs["gen_ai.system"].str()
	}
	c := &Call{File: name, Line: line, API: OpenAIChat, Model: attrs["gen_ai.request.model"].str(), Usage: &u,
		Key: attrs["gen_ai.conversation.id"].str(), ResponseID: attrs["gen_ai.response.id"].str()}
	if strings.Contains(provider, "anthropic") {
		c.API = Anthropic
	}
	if c.Model == "" {
		c.Model = attrs["gen_ai.response.model"].str()
	}
	if ns, err := strconv.ParseInt(strings.Trim(string(sp.Start), `"`), 10, 64); err == nil && ns > 0 {
		c.Time = time.Unix(0, ns).UTC()
	}
	var sys []genAIPart
	if json.Unmarshal([]byte(attrs["gen_ai.system_instructions"].str()), &sys) == nil {
		c.System = genAIBlocks(sys, traces.System)
	}
	var tools []json.RawMessage
	if json.Unmarshal([]byte(attrs["gen_ai.tool.definitions"].str()), &tools) == nil {
		for _, t := range tools {
			var d struct {
				Name string `json:"name"`
			}
			json.Unmarshal(t, &d)
			c.Tools = append(c.Tools, traces.Block{Kind: traces.ToolSchema, Name: d.Name, Input: compact(t)})
		}
	}
	c.Msgs = genAIMessages(attrs["gen_ai.input.messages"].str())
	for _, m := range genAIMessages(attrs["gen_ai.output.messages"].str()) {
		c.Output = append(c.Output, m.Blocks...)
	}
	return c
}

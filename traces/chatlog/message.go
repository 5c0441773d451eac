package chatlog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// A Message is one OpenAI-style chat message, as chat-completions requests,
// hermes-agent's message rows and the OpenHands trajectory sets carry them.
// Content may be a string, null or an array of parts; ToolCalls may be an
// array or that array encoded as a JSON string (hermes stores it as text).
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	// ReasoningContent is the visible reasoning some providers return
	// (DeepSeek, vLLM reasoning parsers, hermes' reasoning column).
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// Text is SWE-agent's name for content (nebius SWE-agent-trajectories).
	Text string `json:"text,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type part struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
}

// ImageTokens is the size given to an image part, whose pixels a log does
// not carry: OpenAI's high-detail cost of one 512×512 tile plus the base
// (85 + 170×4). Real images vary from 85 to a few thousand tokens, so
// sessions with many large screenshots are under-sized.
const ImageTokens = 765

// Warning reasons of the message conversion.
const (
	WarnOrphanResult = "kept tool result with no matching tool call"
	WarnUnanswered   = "kept tool call with no result"
	WarnBadToolCalls = "kept message whose tool_calls are not a valid array (calls dropped)"
	WarnBadContent   = "kept message whose content is neither text nor parts (as raw JSON text)"
	WarnUnknownRole  = "kept message with unknown role as a user message"
	WarnBackwards    = "kept event whose timestamp goes backwards (clamped to the previous one)"
)

// A Transcript appends messages to a session as events, pairing tool calls
// with their results. It is shared by the importers whose logs are
// OpenAI-style message lists (chatlog, hermes).
type Transcript struct {
	S    *traces.Session
	W    *traces.Warnings
	File string
	// open maps a tool call id to the line of the call not yet answered.
	open  map[string]int
	order []string
	last  time.Time
}

// NewTranscript starts appending to s.
func NewTranscript(s *traces.Session, file string, w *traces.Warnings) *Transcript {
	return &Transcript{S: s, W: w, File: file, open: map[string]int{}}
}

// Clamp returns at, or the time of the previous event when at is earlier
// (with a warning), so events are in time order.
func (t *Transcript) Clamp(line int, at time.Time) time.Time {
	if at.Before(t.last) {
		t.W.Add(t.File, line, WarnBackwards)
		return t.last
	}
	t.last = at
	return at
}

// Add appends m at time at (from line of the file) and returns the index of
// the event it became, or -1 when it became the floor. A leading system or
// developer message becomes the floor; later ones are user events with
// Meta["role"] saying what they were.
func (t *Transcript) Add(line int, at time.Time, m *Message) int {
	blocks := t.content(line, m)
	role := m.Role
	switch role {
	case "system", "developer":
		if len(t.S.Events) == 0 && !hasSystem(t.S.Floor) {
			for _, b := range blocks {
				if b.Kind == traces.Text {
					b.Kind = traces.System
				}
				t.S.Floor = append(t.S.Floor, b)
			}
			return -1
		}
		return t.push(traces.Event{Time: t.Clamp(line, at), Kind: traces.User, Blocks: blocks, Meta: map[string]string{"role": role}})
	case "user", "human":
		return t.push(traces.Event{Time: t.Clamp(line, at), Kind: traces.User, Blocks: blocks})
	case "assistant", "ai", "model":
		return t.push(traces.Event{Time: t.Clamp(line, at), Kind: traces.Assistant, Blocks: t.assistant(line, m, blocks)})
	case "tool", "function":
		id := m.ToolCallID
		if _, ok := t.open[id]; ok {
			delete(t.open, id)
		} else {
			t.W.Add(t.File, line, WarnOrphanResult)
		}
		res := traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: joinText(blocks)}
		return t.push(traces.Event{Time: t.Clamp(line, at), Kind: traces.ToolResult, Blocks: []traces.Block{res}})
	default:
		t.W.Add(t.File, line, WarnUnknownRole)
		return t.push(traces.Event{Time: t.Clamp(line, at), Kind: traces.User, Blocks: blocks, Meta: map[string]string{"role": role}})
	}
}

// AssistantBlocks is the content of an assistant message: its reasoning,
// text and tool calls, in that order. The calls are registered for pairing.
func (t *Transcript) AssistantBlocks(line int, m *Message) []traces.Block {
	return t.assistant(line, m, t.content(line, m))
}

func (t *Transcript) assistant(line int, m *Message, blocks []traces.Block) []traces.Block {
	if m.ReasoningContent != "" {
		blocks = append([]traces.Block{{Kind: traces.Thinking, Text: m.ReasoningContent}}, blocks...)
	}
	return append(blocks, t.toolCalls(line, m.ToolCalls)...)
}

// OpenCall registers a tool call made outside Add (Codex's function_call
// items), so that its result pairs.
func (t *Transcript) OpenCall(line int, id string) {
	if _, ok := t.open[id]; !ok {
		t.order = append(t.order, id)
	}
	t.open[id] = line
}

// CloseCall pairs a result with its call; it reports whether the call was
// open, warning when it was not.
func (t *Transcript) CloseCall(line int, id string) bool {
	if _, ok := t.open[id]; ok {
		delete(t.open, id)
		return true
	}
	t.W.Add(t.File, line, WarnOrphanResult)
	return false
}

// Finish warns about tool calls that never got a result.
func (t *Transcript) Finish() {
	for _, id := range t.order {
		if line, ok := t.open[id]; ok {
			t.W.Add(t.File, line, WarnUnanswered)
		}
	}
	t.open, t.order = map[string]int{}, nil
}

func (t *Transcript) push(e traces.Event) int {
	t.S.Events = append(t.S.Events, e)
	return len(t.S.Events) - 1
}

func hasSystem(floor []traces.Block) bool {
	for _, b := range floor {
		if b.Kind == traces.System {
			return true
		}
	}
	return false
}

func (t *Transcript) toolCalls(line int, raw json.RawMessage) []traces.Block {
	raw = unwrapString(raw)
	if isNull(raw) {
		return nil
	}
	var calls []toolCall
	if err := json.Unmarshal(raw, &calls); err != nil {
		t.W.Add(t.File, line, WarnBadToolCalls)
		return nil
	}
	out := make([]traces.Block, 0, len(calls))
	for _, c := range calls {
		out = append(out, traces.Block{Kind: traces.ToolUse, ID: c.ID, Name: c.Function.Name, Input: Arguments(c.Function.Arguments)})
		t.OpenCall(line, c.ID)
	}
	return out
}

// Arguments turns a tool call's arguments into compact JSON: OpenAI sends
// them as a string holding JSON, some logs as the object itself. A string
// that is not JSON is kept as a JSON string.
func Arguments(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
			if !json.Valid(raw) {
				return strconv.Quote(s)
			}
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strconv.Quote(string(raw))
	}
	return b.String()
}

// content turns a message's content into blocks.
func (t *Transcript) content(line int, m *Message) []traces.Block {
	raw := m.Content
	if isNull(raw) {
		if m.Text != "" {
			return []traces.Block{{Kind: traces.Text, Text: m.Text}}
		}
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s == "" {
				return nil
			}
			return []traces.Block{{Kind: traces.Text, Text: s}}
		}
	case '[':
		var parts []part
		if json.Unmarshal(raw, &parts) == nil {
			return fromParts(parts)
		}
	}
	t.W.Add(t.File, line, WarnBadContent)
	return []traces.Block{{Kind: traces.Text, Text: string(raw)}}
}

// fromParts converts content parts: text, input_text and output_text parts are
// text blocks, image parts are images of ImageTokens.
func fromParts(parts []part) []traces.Block {
	var out []traces.Block
	for _, p := range parts {
		switch p.Type {
		case "image_url", "input_image", "image":
			out = append(out, traces.Block{Kind: traces.Image, Tokens: ImageTokens, Name: "image:" + strconv.FormatUint(traces.HashString(string(p.ImageURL)), 16)})
		default:
			if p.Text != "" {
				out = append(out, traces.Block{Kind: traces.Text, Text: p.Text})
			}
		}
	}
	return out
}

func joinText(blocks []traces.Block) string {
	if len(blocks) == 1 {
		return blocks[0].Text
	}
	var b strings.Builder
	for i, x := range blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x.Text)
	}
	return b.String()
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// unwrapString returns the JSON inside raw when raw is a JSON string that
// holds JSON (hermes stores tool_calls as text), raw otherwise.
func unwrapString(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return json.RawMessage(s)
}

package codex

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

type contentItem struct {
	Type             string `json:"type"`
	Text             string `json:"text"`
	EncryptedContent string `json:"encrypted_content"`
}

type responseItem struct {
	Type    string        `json:"type"`
	ID      string        `json:"id"`
	Role    string        `json:"role"`
	Content []contentItem `json:"content"`
	Summary []contentItem `json:"summary"`
	// EncryptedContent is a reasoning or compaction item's opaque payload.
	EncryptedContent string          `json:"encrypted_content"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            *string         `json:"input"`
	CallID           string          `json:"call_id"`
	Output           json.RawMessage `json:"output"`
	Action           json.RawMessage `json:"action"`
	Status           string          `json:"status"`
	Execution        string          `json:"execution"`
	Tools            json.RawMessage `json:"tools"`
	Author           string          `json:"author"`
	RevisedPrompt    string          `json:"revised_prompt"`
}

func texts(items []contentItem, kind traces.BlockKind) []traces.Block {
	var out []traces.Block
	for _, c := range items {
		switch c.Type {
		case "input_image":
			out = append(out, traces.Block{Kind: traces.Image, Tokens: chatlog.ImageTokens, Name: "image:" + strconv.FormatUint(traces.HashString(c.Text), 16)})
		case "encrypted_content":
			if n := agentMessageTokens(len(c.EncryptedContent)); n > 0 {
				out = append(out, opaque(kind, "encrypted", c.EncryptedContent, n))
			}
		default:
			if c.Text != "" {
				out = append(out, traces.Block{Kind: kind, Text: c.Text})
			}
		}
	}
	return out
}

// opaque is a block the log shows only encrypted: sized, and named by a
// hash of its payload, so that the same item re-sent is the same block.
func opaque(kind traces.BlockKind, what, payload string, tokens int) traces.Block {
	return traces.Block{Kind: kind, Name: what + ":" + strconv.FormatUint(traces.HashString(payload), 16), Tokens: tokens}
}

func (rd *reader) item(at time.Time, raw json.RawMessage) {
	var it responseItem
	if err := json.Unmarshal(raw, &it); err != nil {
		rd.sc.Warn(jsonl.WarnInvalidJSON)
		return
	}
	line := rd.sc.Line()
	switch it.Type {
	case "message":
		switch it.Role {
		case "assistant":
			rd.output(at, texts(it.Content, traces.Text)...)
		case "user", "developer", "system":
			rd.message(at, it.Role, texts(it.Content, traces.Text))
		default:
			rd.sc.Warn(chatlog.WarnUnknownRole)
			rd.message(at, it.Role, texts(it.Content, traces.Text))
		}
	case "agent_message":
		// A message another agent of the same session sent this one,
		// plain or encrypted (codex-rs ResponseItem::AgentMessage,
		// AgentMessageInputContent): the model reads it as input.
		ev := traces.Event{Time: at, Kind: traces.User, Blocks: texts(it.Content, traces.Text), Meta: map[string]string{"role": "agent"}}
		if it.Author != "" {
			ev.Meta["author"] = it.Author
		}
		rd.input(ev)
	case "reasoning":
		rd.reason(at, &it)
	case "function_call":
		rd.t.OpenCall(line, it.CallID)
		rd.output(at, traces.Block{Kind: traces.ToolUse, ID: it.CallID, Name: it.Name, Input: chatlog.Arguments(it.Arguments)})
	case "custom_tool_call":
		in := ""
		if it.Input != nil {
			in = strconv.Quote(*it.Input)
		}
		rd.t.OpenCall(line, it.CallID)
		rd.output(at, traces.Block{Kind: traces.ToolUse, ID: it.CallID, Name: it.Name, Input: in})
	case "local_shell_call":
		rd.t.OpenCall(line, it.CallID)
		rd.output(at, traces.Block{Kind: traces.ToolUse, ID: it.CallID, Name: "local_shell", Input: chatlog.Arguments(it.Action)})
	case "tool_search_call":
		// The model asks the harness (or the server) for deferred tools;
		// the tool_search_output that answers it carries their schemas.
		id := callID(it.CallID, "ts", line)
		rd.t.OpenCall(line, id)
		rd.output(at, traces.Block{Kind: traces.ToolUse, ID: id, Name: "tool_search", Input: chatlog.Arguments(it.Arguments)})
	case "web_search_call", "image_generation_call":
		// Server-side tools: the search (or the image) runs inside the
		// model's call, and its results, which the log does not show, are
		// billed as that call's input (the API captures' trace_node_codex
		// reads 26,903 tokens for a 3-message prompt that costs 16,570
		// without a search) and carried on (reasoning.go). The block needs
		// an id to be a valid tool_use; the log has none, so its line
		// names it.
		input := chatlog.Arguments(it.Action)
		name := "web_search"
		if it.Type == "image_generation_call" {
			name, input = "image_generation", strconv.Quote(it.RevisedPrompt)
		}
		ev := rd.output(at, traces.Block{Kind: traces.ToolUse, ID: callID(it.ID, "ws", line), Name: name, Input: input})
		rd.serverTool(ev)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		rd.t.CloseCall(line, it.CallID)
		rd.input(traces.Event{Time: at, Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: it.CallID, Text: outputText(it.Output)}}})
	case "tool_search_output":
		// The schemas of the tools the search loaded: they stay in the
		// conversation (8–52 KB each in CLI 0.144 rollouts). A search the
		// server ran was read inside the call too.
		id := callID(it.CallID, "ts", line)
		if it.CallID == "" {
			id = rd.openSearch()
		}
		if it.Execution == "server" && rd.call >= 0 {
			rd.serverTool(rd.call)
		}
		rd.t.CloseCall(line, id)
		rd.input(traces.Event{Time: at, Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: compactJSON(it.Tools)}}})
	case "compaction", "compaction_summary":
		// The encrypted summary a compacting call returns (remote
		// compaction); the compacted line after it replaces the history.
		if it.EncryptedContent != "" {
			rd.output(at, opaque(traces.Text, "compaction", it.EncryptedContent, compactionTokens(len(it.EncryptedContent))))
		}
	case "ghost_snapshot", "compaction_trigger":
		// A harness-side git snapshot, and the marker a request carries to
		// ask for a compaction: neither is content the model reads.
	default:
		rd.sc.Warn(WarnUnknownItem)
	}
}

// callID is id, or an id made from the line when the log has none.
func callID(id, prefix string, line int) string {
	if id != "" {
		return id
	}
	return prefix + "_line" + strconv.Itoa(line)
}

// openSearch is the id of the last tool_search call without an answer
// (an output without call_id answers it).
func (rd *reader) openSearch() string {
	for i := len(rd.s.Events) - 1; i >= 0; i-- {
		e := &rd.s.Events[i]
		if e.Kind == traces.ToolResult {
			break
		}
		for j := len(e.Blocks) - 1; j >= 0; j-- {
			if b := &e.Blocks[j]; b.Kind == traces.ToolUse && b.Name == "tool_search" {
				return b.ID
			}
		}
	}
	return "ts_line" + strconv.Itoa(rd.sc.Line())
}

// serverTool counts a server-side tool call on call event ev.
func (rd *reader) serverTool(ev int) {
	e := &rd.s.Events[ev]
	n, _ := strconv.Atoi(e.Meta[traces.MetaServerTools])
	setMeta(e, traces.MetaServerTools, strconv.Itoa(n+1))
}

// message appends a user, developer or system message and keeps the
// history a compaction or a rollback needs.
func (rd *reader) message(at time.Time, role string, blocks []traces.Block) {
	ev := traces.Event{Time: at, Kind: traces.User, Blocks: blocks}
	if role != "user" {
		ev.Meta = map[string]string{"role": role}
	}
	user := role == "user" && !contextual(blocks)
	if user && rd.hist.rewind >= 0 {
		setMeta(&ev, traces.MetaRewindTo, strconv.Itoa(rd.hist.rewind))
		rd.hist.rewind = -1
	}
	i := rd.input(ev)
	switch {
	case user:
		rd.hist.turns = append(rd.hist.turns, i)
		rd.hist.users = append(rd.hist.users, joinText(blocks))
		rd.hist.started = true
	case !rd.hist.started:
		rd.hist.initial = append(rd.hist.initial, blocks...)
	}
}

// contextualPrefixes open the user-role messages Codex writes itself (the
// environment, AGENTS.md, permissions and mode notes, a compaction's
// summary) rather than the person: they start no user turn
// (codex-rs/core/src/event_mapping.rs, parse_turn_item; compact.rs,
// collect_user_messages and is_summary_message).
var contextualPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# agents.md instructions", "<instructions>",
	"<permissions instructions>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
	"<collaboration_mode>", "<skill", "another language model started to solve this problem",
}

func contextual(blocks []traces.Block) bool {
	for _, b := range blocks {
		if b.Kind != traces.Text {
			continue
		}
		t := strings.ToLower(strings.TrimSpace(b.Text))
		for _, p := range contextualPrefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
		return false
	}
	return false
}

func joinText(blocks []traces.Block) string {
	var b strings.Builder
	for _, x := range blocks {
		if x.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x.Text)
	}
	return b.String()
}

// outputText is what the model reads of a tool output: a string, an array
// of content items, or (older CLIs) {content, success}.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []contentItem
	if json.Unmarshal(raw, &items) == nil {
		var b strings.Builder
		for i, c := range items {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
		return b.String()
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Content != "" {
		return o.Content
	}
	return string(raw)
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return chatlog.Arguments(raw)
}

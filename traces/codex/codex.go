package codex

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// Format is the Session.Format of imported sessions.
const Format = "codex"

// Warning reasons.
const (
	WarnUnknownType    = "skipped line of unknown type"
	WarnUnknownItem    = "skipped response_item of unknown type"
	WarnUnknownEvent   = "skipped event_msg of unknown type"
	WarnNoTimestamp    = "kept line without a valid timestamp (timed as the previous one)"
	WarnNoMeta         = "kept lines before session_meta"
	WarnRepeatedMeta   = "ignored repeated session_meta (forked history follows)"
	WarnUsageNoCall    = "kept token_count with no model output before it as an empty call"
	WarnNoUsage        = "kept call without token_count usage"
	WarnTotalsMismatch = "kept session whose per-call usage does not add up to total_token_usage"
)

// Import reads one rollout file, or every rollout-*.jsonl under a directory
// (searched recursively, in lexical path order), one session per file.
func Import(path string) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	files, err := jsonl.Files(path, func(name string) bool {
		return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
	}, w)
	if err != nil {
		return nil, w, err
	}
	out := make([]*traces.Session, 0, len(files))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, w, err
		}
		s, err := Read(fh, f, w)
		fh.Close()
		if err != nil {
			return nil, w, err
		}
		out = append(out, s)
	}
	return out, w, nil
}

type line struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type sessionMeta struct {
	ID               string          `json:"id"`
	Cwd              string          `json:"cwd"`
	CLIVersion       string          `json:"cli_version"`
	Originator       string          `json:"originator"`
	Source           json.RawMessage `json:"source"`
	Instructions     *string         `json:"instructions"`
	BaseInstructions *struct {
		Text string `json:"text"`
	} `json:"base_instructions"`
	ParentThreadID string `json:"parent_thread_id"`
	ForkedFromID   string `json:"forked_from_id"`
}

type turnContext struct {
	Model  string `json:"model"`
	Effort string `json:"effort"`
}

type contentItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type responseItem struct {
	Type    string        `json:"type"`
	Role    string        `json:"role"`
	Content []contentItem `json:"content"`
	Summary []contentItem `json:"summary"`
	// Encrypted reasoning is opaque and the API does not bill it as input
	// beyond what the provider reports, so it counts 0 here.
	EncryptedContent *string         `json:"encrypted_content"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            *string         `json:"input"`
	CallID           string          `json:"call_id"`
	Output           json.RawMessage `json:"output"`
	Action           json.RawMessage `json:"action"`
	Status           string          `json:"status"`
}

type tokenUsage struct {
	InputTokens           traces.Count `json:"input_tokens"`
	CachedInputTokens     traces.Count `json:"cached_input_tokens"`
	CacheWriteInputTokens traces.Count `json:"cache_write_input_tokens"`
	OutputTokens          traces.Count `json:"output_tokens"`
	ReasoningOutputTokens traces.Count `json:"reasoning_output_tokens"`
	TotalTokens           traces.Count `json:"total_tokens"`
}

// usage converts to the additive form, checked by traces.CheckOpenAI:
// Codex's input_tokens includes the cached tokens (and the written ones,
// when a newer CLI reports them). Output includes reasoning tokens, as
// OpenAI bills them.
func (u tokenUsage) usage(warn func(string)) traces.Usage {
	return traces.CheckOpenAI(float64(u.InputTokens), float64(u.CachedInputTokens), float64(u.CacheWriteInputTokens),
		float64(u.OutputTokens), warn)
}

// totalUsage is the session total so far, for the end-of-file check only:
// checked with a session's bound and without warnings (each call was).
func (u tokenUsage) totalUsage() traces.Usage {
	c := func(v traces.Count) int64 {
		n, _ := traces.CheckCountUpTo(float64(v), maxSessionTokens)
		return n
	}
	in, cached, written := c(u.InputTokens), c(u.CachedInputTokens), c(u.CacheWriteInputTokens)
	cached = min(cached, in)
	written = min(written, in-cached)
	return traces.Usage{Input: in - cached - written, CacheRead: cached, CacheWrite5m: written, Output: c(u.OutputTokens)}
}

// maxSessionTokens bounds a session's running totals: 10^6 calls at the
// per-call bound's order is far past any real session.
const maxSessionTokens = 1 << 53

type eventMsg struct {
	Type string `json:"type"`
	Info *struct {
		Last               *tokenUsage `json:"last_token_usage"`
		Total              *tokenUsage `json:"total_token_usage"`
		ModelContextWindow int         `json:"model_context_window"`
	} `json:"info"`
	ModelContextWindow int    `json:"model_context_window"`
	Reason             string `json:"reason"`
}

type compacted struct {
	Message string `json:"message"`
}

// uiEvents are event_msg types that mirror response items for the UI or
// report progress; they carry nothing the model saw.
var uiEvents = map[string]bool{
	"user_message": true, "agent_message": true, "agent_reasoning": true,
	"agent_reasoning_raw_content": true, "agent_reasoning_section_break": true,
	"agent_message_delta": true, "agent_reasoning_delta": true,
	"exec_command_begin": true, "exec_command_end": true, "exec_command_output_delta": true,
	"exec_approval_request": true, "apply_patch_approval_request": true,
	"patch_apply_begin": true, "patch_apply_end": true,
	"mcp_tool_call_begin": true, "mcp_tool_call_end": true, "mcp_list_tools_response": true,
	"web_search_begin": true, "web_search_end": true, "view_image_tool_call": true,
	"turn_diff": true, "plan_update": true, "background_event": true, "stream_error": true,
	"error": true, "warning": true, "entered_review_mode": true, "exited_review_mode": true,
	"session_configured": true, "thread_settings_applied": true, "thread_name_updated": true,
	"thread_rolled_back": true, "item_started": true, "item_completed": true,
	"context_compacted": true, "shutdown_complete": true, "get_history_entry_response": true,
	"list_custom_prompts_response": true, "conversation_path": true, "undo_started": true,
	"undo_completed": true, "deprecation_notice": true, "raw_response_item": true,
}

// reader holds the state of one rollout.
type reader struct {
	sc    *jsonl.Scanner
	s     *traces.Session
	t     *chatlog.Transcript
	model string
	last  time.Time
	// call is the index of the assistant event the model is producing, -1
	// between calls.
	call int
	// inputAt is the time of the last input (user message, tool output) the
	// call answers; latency is measured from it.
	inputAt time.Time
	// unbilled lists assistant events still waiting for their token_count,
	// with the line each started on (for the warning if none comes).
	unbilled  []pending
	prevTotal *tokenUsage
	sum       traces.Usage
	metaSeen  bool
}

// Read reads one rollout; name is used in warnings and as the session id
// when the rollout has no session_meta.
func Read(r io.Reader, name string, w *traces.Warnings) (*traces.Session, error) {
	s := &traces.Session{Format: Format, Source: traces.SourceCLI}
	rd := &reader{sc: jsonl.NewScanner(r, name, w), s: s, call: -1}
	rd.t = chatlog.NewTranscript(s, name, w)
	early := false
	for rd.sc.Scan() {
		var l line
		if !rd.sc.Decode(&l) {
			continue
		}
		at := rd.time(l.Timestamp)
		if !rd.metaSeen && l.Type != "session_meta" && !early {
			early = true
			rd.sc.Warn(WarnNoMeta)
		}
		switch l.Type {
		case "session_meta":
			rd.meta(l.Payload)
		case "turn_context":
			rd.turnContext(at, l.Payload)
		case "response_item":
			rd.item(at, l.Payload)
		case "event_msg":
			rd.event(at, l.Payload)
		case "compacted":
			rd.compacted(at, l.Payload)
		default:
			rd.sc.Warn(WarnUnknownType)
		}
	}
	if err := rd.sc.Err(); err != nil {
		return nil, err
	}
	rd.t.Finish()
	for _, p := range rd.unbilled {
		w.Add(name, p.line, WarnNoUsage)
	}
	if rd.prevTotal != nil && rd.sum != rd.prevTotal.totalUsage() {
		w.Add(name, rd.sc.Line(), WarnTotalsMismatch)
	}
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	s.FloorPartial = true
	if hasSystem(s.Floor) {
		s.Notes = append(s.Notes, "floor holds the logged system prompt only: Codex does not log its tool schemas")
	} else {
		s.Notes = append(s.Notes, "floor not logged: this Codex version records neither the system prompt nor the tool schemas")
	}
	return s, nil
}

type pending struct{ ev, line int }

// setMeta sets an event's Meta key, making the map if the event has none.
func setMeta(e *traces.Event, k, v string) {
	if e.Meta == nil {
		e.Meta = map[string]string{}
	}
	e.Meta[k] = v
}

func hasSystem(floor []traces.Block) bool {
	for _, b := range floor {
		if b.Kind == traces.System {
			return true
		}
	}
	return false
}

func (rd *reader) time(ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		rd.sc.Warn(WarnNoTimestamp)
		return rd.last
	}
	t = rd.t.Clamp(rd.sc.Line(), t.UTC())
	rd.last = t
	return t
}

func (rd *reader) meta(raw json.RawMessage) {
	var m sessionMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		rd.sc.Warn(jsonl.WarnInvalidJSON)
		return
	}
	if rd.metaSeen {
		if m.ID != rd.s.ID {
			rd.sc.Warn(WarnRepeatedMeta)
		}
		return
	}
	rd.metaSeen = true
	rd.s.ID = m.ID
	rd.s.Source = source(m.Source)
	rd.s.Parent = m.ParentThreadID
	text := ""
	if m.BaseInstructions != nil {
		text = m.BaseInstructions.Text
	} else if m.Instructions != nil {
		text = *m.Instructions
	}
	if text != "" {
		rd.s.Floor = append(rd.s.Floor, traces.Block{Kind: traces.System, Text: text})
	}
	if m.CLIVersion != "" || m.Originator != "" {
		rd.s.Notes = append(rd.s.Notes, "codex "+strings.TrimSpace(m.Originator+" "+m.CLIVersion))
	}
}

// source maps Codex's session source: a string (cli, vscode, exec, mcp) or
// {"subagent": ...}. exec and mcp sessions are driven by a program, so they
// are machine-paced.
func source(raw json.RawMessage) traces.Source {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "", "cli":
			return traces.SourceCLI
		case "exec":
			return traces.SourceOneshot
		case "mcp":
			return traces.SourceAPI
		}
		return traces.Source(s)
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) == nil {
		if _, ok := o["subagent"]; ok {
			return traces.SourceSubagent
		}
	}
	return traces.SourceCLI
}

func (rd *reader) turnContext(at time.Time, raw json.RawMessage) {
	var tc turnContext
	if json.Unmarshal(raw, &tc) != nil || tc.Model == "" {
		return
	}
	if rd.s.Model == "" {
		rd.s.Model = tc.Model
	} else if tc.Model != rd.model {
		ev := traces.Event{Time: at, Kind: traces.ModelSwitch, Model: tc.Model}
		if tc.Effort != "" {
			ev.Meta = map[string]string{"effort": tc.Effort}
		}
		rd.push(ev)
	}
	rd.model = tc.Model
}

func (rd *reader) push(e traces.Event) int {
	rd.s.Events = append(rd.s.Events, e)
	return len(rd.s.Events) - 1
}

// input appends an event the model reads (user message, tool output): the
// current call, if any, is over.
func (rd *reader) input(e traces.Event) {
	rd.call = -1
	rd.inputAt = e.Time
	rd.push(e)
}

// output appends blocks to the call in progress, starting one if needed.
func (rd *reader) output(at time.Time, blocks ...traces.Block) {
	if rd.call < 0 {
		rd.call = rd.push(traces.Event{Time: at, Kind: traces.Assistant, Model: rd.model})
		rd.unbilled = append(rd.unbilled, pending{rd.call, rd.sc.Line()})
	}
	ev := &rd.s.Events[rd.call]
	ev.Blocks = append(ev.Blocks, blocks...)
}

func texts(items []contentItem, kind traces.BlockKind) []traces.Block {
	var out []traces.Block
	for _, c := range items {
		switch c.Type {
		case "input_image":
			out = append(out, traces.Block{Kind: traces.Image, Tokens: chatlog.ImageTokens, Name: "image:" + strconv.FormatUint(traces.HashString(c.Text), 16)})
		default:
			if c.Text != "" {
				out = append(out, traces.Block{Kind: kind, Text: c.Text})
			}
		}
	}
	return out
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
			ev := traces.Event{Time: at, Kind: traces.User, Blocks: texts(it.Content, traces.Text)}
			if it.Role != "user" {
				ev.Meta = map[string]string{"role": it.Role}
			}
			rd.input(ev)
		default:
			rd.sc.Warn(chatlog.WarnUnknownRole)
			rd.input(traces.Event{Time: at, Kind: traces.User, Blocks: texts(it.Content, traces.Text), Meta: map[string]string{"role": it.Role}})
		}
	case "reasoning":
		// Only the summary is visible; encrypted content is opaque and
		// counts 0 (the provider's output_tokens already bill it).
		rd.output(at, texts(it.Summary, traces.Thinking)...)
		if len(it.Summary) == 0 {
			rd.output(at)
		}
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
	case "web_search_call":
		// A server-side tool: the call and its results live inside the
		// model's turn, with no output item.
		rd.output(at, traces.Block{Kind: traces.ToolUse, Name: "web_search", Input: chatlog.Arguments(it.Action)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		rd.t.CloseCall(line, it.CallID)
		rd.input(traces.Event{Time: at, Kind: traces.ToolResult, Blocks: []traces.Block{{Kind: traces.ToolResultBlock, ID: it.CallID, Text: outputText(it.Output)}}})
	case "compaction", "compaction_summary":
		// Remote compaction: the summary is encrypted, so only the event is
		// known.
		rd.call = -1
		rd.push(traces.Event{Time: at, Kind: traces.Compaction, Meta: map[string]string{"summary": "encrypted"}})
	case "ghost_snapshot":
		// A harness-side git snapshot; never sent to the model.
	default:
		rd.sc.Warn(WarnUnknownItem)
	}
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

func (rd *reader) event(at time.Time, raw json.RawMessage) {
	var em eventMsg
	if err := json.Unmarshal(raw, &em); err != nil {
		rd.sc.Warn(jsonl.WarnInvalidJSON)
		return
	}
	switch em.Type {
	case "token_count":
		rd.tokenCount(at, &em)
	case "task_started":
		if em.ModelContextWindow > 0 && rd.s.Window == 0 {
			rd.s.Window = em.ModelContextWindow
		}
		rd.call = -1
	case "task_complete":
		rd.call = -1
	case "turn_aborted":
		if rd.call >= 0 {
			setMeta(&rd.s.Events[rd.call], "aborted", em.Reason)
		}
		rd.call = -1
	default:
		if !uiEvents[em.Type] {
			rd.sc.Warn(WarnUnknownEvent)
		}
	}
}

// tokenCount attaches last_token_usage to the call it follows. Codex
// repeats a token_count with unchanged totals when only the rate limits
// changed; those are not calls and are skipped.
func (rd *reader) tokenCount(at time.Time, em *eventMsg) {
	if em.Info == nil || em.Info.Last == nil {
		return
	}
	if em.Info.ModelContextWindow > 0 && rd.s.Window == 0 {
		rd.s.Window = em.Info.ModelContextWindow
	}
	if em.Info.Total != nil && rd.prevTotal != nil && *em.Info.Total == *rd.prevTotal {
		return
	}
	if em.Info.Total != nil {
		t := *em.Info.Total
		rd.prevTotal = &t
	}
	u := em.Info.Last.usage(rd.sc.Warn)
	rd.sum = rd.sum.Add(u)
	// The usage belongs to the latest call, when that call has none yet. A
	// call whose token_count was lost keeps no usage (and is warned about)
	// rather than shifting every later reading onto the wrong call.
	idx := -1
	if n := len(rd.unbilled); n > 0 && rd.unbilled[n-1].ev == rd.lastAssistant() {
		idx = rd.unbilled[n-1].ev
		rd.unbilled = rd.unbilled[:n-1]
	} else {
		rd.sc.Warn(WarnUsageNoCall)
		idx = rd.push(traces.Event{Time: at, Kind: traces.Assistant, Model: rd.model})
	}
	ev := &rd.s.Events[idx]
	ev.Usage = &u
	if !rd.inputAt.IsZero() && at.After(rd.inputAt) && ev.Time.Sub(rd.inputAt) >= 0 {
		ev.LatencyMS = at.Sub(rd.inputAt).Milliseconds()
	}
	if r, _ := traces.CheckCount(float64(em.Info.Last.ReasoningOutputTokens)); r > 0 {
		setMeta(ev, "reasoning_tokens", strconv.FormatInt(r, 10))
	}
	rd.call = -1
}

func (rd *reader) lastAssistant() int {
	for i := len(rd.s.Events) - 1; i >= 0; i-- {
		if rd.s.Events[i].Kind == traces.Assistant {
			return i
		}
	}
	return -1
}

func (rd *reader) compacted(at time.Time, raw json.RawMessage) {
	var c compacted
	if err := json.Unmarshal(raw, &c); err != nil {
		rd.sc.Warn(jsonl.WarnInvalidJSON)
		return
	}
	rd.call = -1
	rd.push(traces.Event{Time: at, Kind: traces.Compaction})
	if c.Message != "" {
		rd.input(traces.Event{Time: at, Kind: traces.User, Summary: true, Blocks: []traces.Block{{Kind: traces.Text, Text: c.Message}}})
	}
}

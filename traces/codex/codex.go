package codex

import (
	"bytes"
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
	WarnNoTimestamp    = "kept line without a valid timestamp (none, not RFC 3339, or before 2000 or after 2099: Go's zero time, the Unix epoch): timed as the previous one"
	WarnNoMeta         = "kept lines before session_meta"
	WarnUsageNoCall    = "kept token_count with no model output before it as an empty call"
	WarnNoUsage        = "kept call without token_count usage"
	WarnTotalsMismatch = "kept session whose per-call usage does not add up to total_token_usage"
	// WarnForkNotV7: a forked rollout whose ids are not time-ordered UUIDs
	// cannot tell the copied history from its own lines (see fork.go).
	WarnForkNotV7 = "kept a forked rollout's copied history as its own (its ids are not UUIDv7, so the copy's end is unknown)"
	// WarnRollbackPast: a thread_rolled_back asking for more user turns
	// than the conversation has since its start or its last compaction.
	WarnRollbackPast = "kept thread_rolled_back of more user turns than there are (rewound to the first)"
)

// Import reads one rollout file, or every rollout under a directory
// (searched recursively, in lexical path order), one session per file. A
// directory's rollouts are its rollout-*.jsonl files and any other .jsonl
// file whose first line is a session_meta (a rollout copied under another
// name).
func Import(path string) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	files, err := jsonl.Files(path, func(name string) bool { return strings.HasSuffix(name, ".jsonl") }, w)
	if err != nil {
		return nil, w, err
	}
	out := make([]*traces.Session, 0, len(files))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, w, err
		}
		if f != path && !IsRolloutName(filepath.Base(f)) && !IsRollout(fh) {
			fh.Close()
			continue
		}
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			fh.Close()
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

// IsRolloutName reports whether a file name is a Codex rollout's
// (rollout-*.jsonl, as Codex names them under ~/.codex/sessions).
func IsRolloutName(name string) bool {
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
}

// IsRollout reports whether r starts with a session_meta line (its first
// traces.HeadSize bytes are read).
func IsRollout(r io.Reader) bool {
	head := make([]byte, traces.HeadSize)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return Sniff(head)
}

// Sniff reports whether a file's first line is a rollout's session_meta.
func Sniff(head []byte) bool {
	return bytes.Contains(head, []byte(`"type":"session_meta"`)) || bytes.Contains(head, []byte(`"type": "session_meta"`))
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
	DynamicTools   []dynamicTool `json:"dynamic_tools"`
	ParentThreadID string        `json:"parent_thread_id"`
	ForkedFromID   string        `json:"forked_from_id"`
}

type turnContext struct {
	Model  string `json:"model"`
	Effort string `json:"effort"`
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
	TurnID             string `json:"turn_id"`
	Reason             string `json:"reason"`
	NumTurns           int    `json:"num_turns"`
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
	"item_started": true, "item_completed": true,
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
	// window is the context window of the current turn.
	window int

	fork      fork
	reasoning []reasoningRef
	hist      history
}

// Read reads one rollout; name is used in warnings and as the session id
// when the rollout has no session_meta.
func Read(r io.Reader, name string, w *traces.Warnings) (*traces.Session, error) {
	s := &traces.Session{Format: Format, Source: traces.SourceCLI}
	rd := &reader{sc: jsonl.NewScanner(r, name, w), s: s, call: -1, hist: history{rewind: -1}}
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
		case "world_state":
			// The harness's baseline of the context it last sent (cwd,
			// instructions, settings), from which it diffs the developer
			// and user messages of the next turn; those messages are
			// logged as response items, the state itself is never sent
			// (codex-rs RolloutItem::WorldState).
		default:
			rd.sc.Warn(WarnUnknownType)
		}
	}
	if err := rd.sc.Err(); err != nil {
		return nil, err
	}
	rd.sc.FailUnread()
	rd.t.Finish()
	rd.finishReasoning()
	for _, p := range rd.unbilled {
		w.Add(name, p.line, WarnNoUsage)
	}
	if rd.prevTotal != nil && rd.sum != diff(rd.prevTotal.totalUsage(), rd.fork.base()) {
		w.Add(name, rd.sc.Line(), WarnTotalsMismatch)
	}
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	s.FloorPartial = true
	switch {
	case hasSystem(s.Floor) && hasTools(s.Floor):
		s.Notes = append(s.Notes, "floor holds the logged system prompt and dynamic tools: Codex does not log its built-in tool schemas")
	case hasSystem(s.Floor):
		s.Notes = append(s.Notes, "floor holds the logged system prompt only: Codex does not log its built-in tool schemas")
	default:
		s.Notes = append(s.Notes, "floor not logged: this Codex version records neither the system prompt nor the tool schemas")
	}
	if rd.fork.from != "" {
		s.Notes = append(s.Notes, "forked from "+rd.fork.from+": the copied history is the starting context, its calls are the other session's")
	}
	return s, nil
}

// diff is a − b field by field: a session's own usage when b is the total
// it carried on from.
func diff(a, b traces.Usage) traces.Usage {
	return traces.Usage{Input: a.Input - b.Input, CacheWrite5m: a.CacheWrite5m - b.CacheWrite5m,
		CacheWrite1h: a.CacheWrite1h - b.CacheWrite1h, CacheRead: a.CacheRead - b.CacheRead, Output: a.Output - b.Output}
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

func hasTools(floor []traces.Block) bool {
	for _, b := range floor {
		if b.Kind == traces.ToolSchema {
			return true
		}
	}
	return false
}

func (rd *reader) time(ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || !traces.PlausibleTime(t) {
		// Go's zero time read as none, in silence; the Unix epoch as a
		// time 56 years before the next line's.
		rd.sc.WarnAt(traces.TimePlace(rd.sc.File(), rd.sc.Line(), ts), WarnNoTimestamp)
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
		// Another session's meta: a fork copies its parent's verbatim
		// before the parent's history (fork.go). One with the session's
		// own id (a resumed rollout) says nothing new.
		if m.ID != rd.s.ID {
			rd.startCopy()
		}
		return
	}
	rd.metaSeen = true
	rd.s.ID = m.ID
	rd.s.Source = source(m.Source)
	rd.s.Parent = m.ParentThreadID
	if rd.s.Parent == "" {
		rd.s.Parent = spawnParent(m.Source)
	}
	rd.fork.from, rd.fork.own = m.ForkedFromID, m.ID
	text := ""
	if m.BaseInstructions != nil {
		text = m.BaseInstructions.Text
	} else if m.Instructions != nil {
		text = *m.Instructions
	}
	rd.s.Floor = append(rd.s.Floor, toolSchemas(m.DynamicTools)...)
	if text != "" {
		rd.s.Floor = append(rd.s.Floor, traces.Block{Kind: traces.System, Text: text})
	}
	if m.CLIVersion != "" || m.Originator != "" {
		rd.s.Notes = append(rd.s.Notes, "codex "+strings.TrimSpace(m.Originator+" "+m.CLIVersion))
	}
	if v := strings.TrimSpace(m.CLIVersion); v != "" && rd.s.Harness == "" {
		// A fork's copied parent session_meta follows its own: the
		// version that wrote the file is the first one's.
		rd.s.Harness = "codex " + v
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

// spawnParent is the parent thread of a subagent spawned by another
// thread: source {"subagent":{"thread_spawn":{"parent_thread_id":...}}}
// (codex-rs/protocol/src/protocol.rs, SubAgentSource::ThreadSpawn).
func spawnParent(raw json.RawMessage) string {
	var o struct {
		Subagent struct {
			ThreadSpawn struct {
				ParentThreadID string `json:"parent_thread_id"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o.Subagent.ThreadSpawn.ParentThreadID
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

// setWindow takes the context window a turn announces (task_started; a
// token_count when no turn did): the session's first, and a model_switch
// event carrying the new one when a later turn changes it (Codex sizes the
// window per model and turn: 121,600 and 353,400 within one session).
func (rd *reader) setWindow(at time.Time, w int) {
	switch {
	case w <= 0 || w == rd.window:
		return
	case rd.s.Window == 0:
		rd.s.Window = w
	default:
		rd.push(traces.Event{Time: at, Kind: traces.ModelSwitch, Model: rd.model,
			Meta: map[string]string{traces.MetaWindow: strconv.Itoa(w)}})
	}
	rd.window = w
}

func (rd *reader) push(e traces.Event) int {
	rd.s.Events = append(rd.s.Events, e)
	return len(rd.s.Events) - 1
}

// input appends an event the model reads (user message, tool output): the
// current call, if any, is over.
func (rd *reader) input(e traces.Event) int {
	rd.call = -1
	rd.inputAt = e.Time
	return rd.push(e)
}

// output appends blocks to the call in progress, starting one if needed.
// It returns the call's event index. A call in a fork's copied history is
// the parent's: history, not billed here (traces.MetaCopied).
func (rd *reader) output(at time.Time, blocks ...traces.Block) int {
	if rd.call < 0 {
		ev := traces.Event{Time: at, Kind: traces.Assistant, Model: rd.model}
		if rd.fork.copying {
			ev.Meta = map[string]string{traces.MetaCopied: "true"}
		}
		rd.call = rd.push(ev)
		if !rd.fork.copying {
			rd.unbilled = append(rd.unbilled, pending{rd.call, rd.sc.Line()})
		}
	}
	ev := &rd.s.Events[rd.call]
	ev.Blocks = append(ev.Blocks, blocks...)
	return rd.call
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
		if rd.fork.copying && rd.fork.ends(em.TurnID) {
			rd.endCopy()
		}
		rd.setWindow(at, em.ModelContextWindow)
		rd.call = -1
	case "task_complete":
		rd.call = -1
	case "turn_aborted":
		if rd.call >= 0 {
			setMeta(&rd.s.Events[rd.call], "aborted", em.Reason)
		}
		rd.call = -1
	case "thread_rolled_back":
		rd.rollBack(em.NumTurns)
	default:
		if !uiEvents[em.Type] {
			rd.sc.Warn(WarnUnknownEvent)
		}
	}
}

// tokenCount attaches last_token_usage to the call it follows. Codex
// repeats a token_count with unchanged totals when only the rate limits
// changed; those are not calls and are skipped. A fork's copied
// token_counts are its parent's calls: only their total is kept, which the
// fork's own totals carry on from.
func (rd *reader) tokenCount(at time.Time, em *eventMsg) {
	if em.Info == nil || em.Info.Last == nil {
		return
	}
	if rd.window == 0 {
		rd.setWindow(at, em.Info.ModelContextWindow)
	}
	if em.Info.Total != nil && rd.prevTotal != nil && *em.Info.Total == *rd.prevTotal {
		return
	}
	if em.Info.Total != nil {
		t := *em.Info.Total
		rd.prevTotal = &t
	}
	if rd.fork.copying {
		rd.fork.total = rd.prevTotal
		rd.call = -1
		return
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
	r, _ := traces.CheckCount(float64(em.Info.Last.ReasoningOutputTokens))
	if r > 0 {
		setMeta(ev, "reasoning_tokens", strconv.FormatInt(r, 10))
	}
	if ev.Meta[traces.MetaServerTools] != "" {
		r = 0 // not sent again (see reasoning.go)
	}
	rd.sizeReasoning(idx, int(r))
	rd.call = -1
}

func (rd *reader) lastAssistant() int {
	for i := len(rd.s.Events) - 1; i >= 0; i-- {
		if rd.s.Events[i].Kind == traces.Assistant && rd.s.Events[i].Meta[traces.MetaCopied] != "true" {
			return i
		}
	}
	return -1
}

package traces

import (
	"strconv"
	"time"
)

// Version is the native trace format version written by Writer.
const Version = 1

// Source says who drives a session, which decides whether it is human- or
// machine-paced (hermes' auto TTL keys on it).
type Source string

// Sources seen in hermes-agent and Claude Code. Unknown sources are kept as
// given.
const (
	SourceCLI       Source = "cli"
	SourceTUI       Source = "tui"
	SourceDesktop   Source = "desktop"
	SourceMessaging Source = "messaging"
	SourceCron      Source = "cron"
	SourceSubagent  Source = "subagent"
	SourceOneshot   Source = "oneshot"
	SourceWebhook   Source = "webhook"
	SourceAPI       Source = "api"
	SourceBatch     Source = "batch"
)

// HumanPaced reports whether a person is at the other end of the session,
// so that idle gaps of minutes to hours are normal (hermes: cli, tui,
// desktop, messaging). Unknown sources count as human-paced.
func (s Source) HumanPaced() bool {
	switch s {
	case SourceSubagent, SourceCron, SourceOneshot, SourceWebhook, SourceAPI, SourceBatch, "kanban", "tool":
		return false
	}
	return true
}

// A Session is one conversation: its metadata, its floor (the system prompt
// and tool schemas sent first on every request) and its events in order.
type Session struct {
	ID     string `json:"id"`
	Source Source `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
	// Window is the context window in tokens; 0 means take it from the rate
	// card of Model.
	Window int `json:"window,omitempty"`
	// Format names where the session came from ("native", "claude-code",
	// "codex", "hermes", "synth:<profile>", ...).
	Format string `json:"format,omitempty"`
	// Harness is the program and version that wrote a recorded log
	// ("claude-code 1.0.89", "codex 0.142.4"), when the log says: the
	// recorded policy follows that version's request layout (where Claude
	// Code puts its cache marks, what it re-sends). Empty when unknown.
	Harness string `json:"harness,omitempty"`
	// Tenant groups sessions that share one provider account and so one
	// provider-side cache. Empty means the session's own ID.
	Tenant string `json:"tenant,omitempty"`
	// Account is the account the log's layout says the session belongs
	// to, when it says: a Claude Code log under a config directory's
	// projects/ (every session under one ~/.claude is one login, whose
	// sessions share the provider's cache). fidelity replays each
	// account's sessions on one provider; empty replays a session alone.
	Account string `json:"account,omitempty"`
	// Project is the key of the working directory the session's first
	// prompt ran in (a hash, like MetaEnv), when the log says: Claude Code
	// files every session of one project in one folder named by it, so
	// files of one folder and project are one login's (GroupProjects).
	Project  string   `json:"project,omitempty"`
	Parent   string   `json:"parent,omitempty"`
	Children []string `json:"children,omitempty"`
	// Floor is the system prompt and the tool schemas, in the order the
	// provider receives them (tools first).
	Floor []Block `json:"floor,omitempty"`
	// FloorPartial says the log shows only part of the floor (Codex logs
	// its instructions and its dynamic tools, never its built-in tool
	// schemas): a replay sizes the rest from the first billed call, as it
	// sizes a floor the log omits.
	FloorPartial bool `json:"floor_partial,omitempty"`
	// Notes are free-form remarks an importer or generator wants a reader to
	// see ("timing is synthetic", ...). They never change a result.
	Notes []string `json:"notes,omitempty"`
	// File is the log the session was read from, when an importer knows
	// it: warnings about its events name File:Line.
	File string `json:"-"`

	Events []Event `json:"-"`
}

// TenantID is the key under which the session's provider cache lives.
func (s *Session) TenantID() string {
	if s.Tenant != "" {
		return s.Tenant
	}
	if s.Parent != "" {
		return s.Parent
	}
	return s.ID
}

// Start is the time of the first event, or the zero time.
func (s *Session) Start() time.Time {
	if len(s.Events) == 0 {
		return time.Time{}
	}
	return s.Events[0].Time
}

// Kind is what an event records.
type Kind string

// Event kinds.
const (
	// User is a message from the person (or the driver of a machine-paced
	// session).
	User Kind = "user"
	// Assistant is one model call and the message it produced.
	Assistant Kind = "assistant"
	// ToolResult is the user-role message carrying tool results back.
	ToolResult Kind = "tool_result"
	// ModelSwitch changes the model for later calls (Model holds the new one).
	ModelSwitch Kind = "model_switch"
	// Compaction is a compaction the recorded harness did. The continuation
	// summary, when logged, is the next User event with Summary set.
	Compaction Kind = "compaction"
	// Resume marks a session picked up again after it was closed.
	Resume Kind = "resume"
	// Restart is a harness process restart: in-memory state is lost, durable
	// state (the breaker counters) survives.
	Restart Kind = "restart"
	// FloorChange is a change of the system prompt or tool schemas mid-session
	// (an MCP server reconnected, a setting changed). Blocks, when given, are
	// the new floor; with none, the change is opaque: the session's own floor
	// keeps its size but not its identity, so the cache breaks after the
	// shared part of the floor.
	FloorChange Kind = "floor_change"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case User, Assistant, ToolResult, ModelSwitch, Compaction, Resume, Restart, FloorChange:
		return true
	}
	return false
}

// An Event is one entry of the transcript.
type Event struct {
	Time   time.Time `json:"t"`
	Kind   Kind      `json:"kind"`
	Blocks []Block   `json:"blocks,omitempty"`
	// Model is the model of an assistant call, or the new model of a switch.
	Model string `json:"model,omitempty"`
	// Usage is what the provider billed for an assistant call, when recorded.
	Usage *Usage `json:"usage,omitempty"`
	// LatencyMS is the recorded wall time of the call (assistant) or of the
	// tool run (tool_result), when known.
	LatencyMS int64 `json:"latency_ms,omitempty"`
	// RequestID is the provider's request id of an assistant call.
	RequestID string `json:"request_id,omitempty"`
	// Summary marks a user event that is a compaction's continuation summary.
	Summary bool `json:"summary,omitempty"`
	// Line is where the event was read in its session's File (0: not
	// known), for warnings: an importer's position, not part of a trace.
	Line int32 `json:"-"`
	// Meta carries small facts an importer kept: a compaction's trigger and
	// pre-compaction size, a subagent link. Keys are sorted when written.
	Meta map[string]string `json:"meta,omitempty"`
}

// MetaCopied marks an assistant event a log copied from another session
// (a resumed session's file repeats the calls of the one it continues):
// it is history the conversation carries, not a call; replays append it
// without calling the model, and its bill belongs to the other session.
const MetaCopied = "copied"

// MetaRewindTo, on a user event, is the index of the earlier event the
// message follows when that is not the event before it: the person rewound
// the conversation (Esc Esc in Claude Code, or an edited message) and the
// events after that index, up to this one, are off the conversation's path
// from now on. Their calls were made and billed; later calls do not carry
// them.
const MetaRewindTo = "rewind_to"

// MetaInterrupted, on a user event that is Claude Code's "[Request
// interrupted by user]" notice right after a prompt (no answer logged
// between), is "prompt": the prompt's request was sent, and the person
// stopped it before an answer came. A request that ran long enough cached
// the prompt, which the next call reads.
const MetaInterrupted = "interrupted"

// MetaServerTools, on an assistant event, is how many server-side tool calls
// (OpenAI's web search, image generation) the call ran. The provider read
// their results inside the call and billed them as its input, and later
// requests carry them, but no log shows their size: only the call's own
// bill does.
const MetaServerTools = "server_tools"

// MetaThinking, on a user event, is the thinking setting the harness
// logged with the prompt (Claude Code's thinkingMetadata): "max=N" for a
// budget of N tokens, "level=L" for a named level, "disabled" for thinking
// switched off. The replay asks the harness's version what it sent
// (claudecode.PromptBudget).
const MetaThinking = "thinking"

// MetaWindow, on a model_switch event, is the context window in tokens from
// that event on (a harness may change it per turn without changing model).
const MetaWindow = "window"

// MetaCause, on a floor_change event, says what changed the floor when
// the log shows only the cause; CauseWorkingDir is a new working directory
// at a prompt, which the recorded harness names in its system prompt (a
// replay asks the harness's version whether that text is rebuilt per
// prompt).
const (
	MetaCause       = "cause"
	CauseWorkingDir = "working directory"
)

// MetaEnv and MetaEnvWas, on a floor_change event of CauseWorkingDir, are
// opaque keys (a hash, never the path) of the working directory the
// system prompt names from the event on, and of the one it named before:
// a replay gives each directory's system text one identity, so a prompt
// back in an earlier directory sends the text that directory's entry
// cached.
const (
	MetaEnv    = "env"
	MetaEnvWas = "env_was"
)

// RewindTo is the event index a user event's conversation was rewound to,
// and whether it was: the MetaRewindTo value when it is a valid index
// before i.
func (e *Event) RewindTo(i int) (int, bool) {
	v, ok := e.Meta[MetaRewindTo]
	if !ok || e.Kind != User {
		return 0, false
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 || k >= i {
		return 0, false
	}
	return k, true
}

// BlockKind is the type of a content block.
type BlockKind string

// Block kinds, as the Anthropic Messages API names them.
const (
	Text            BlockKind = "text"
	ToolUse         BlockKind = "tool_use"
	ToolResultBlock BlockKind = "tool_result"
	Thinking        BlockKind = "thinking"
	Image           BlockKind = "image"
	// ToolSchema is one tool definition of the floor.
	ToolSchema BlockKind = "tool_schema"
	// System is (part of) the system prompt.
	System BlockKind = "system"
)

// A Block is one piece of content. Its text is kept when known; content a log
// does not show (the system prompt of a Claude Code session) has only a token
// size and a stable identity in Name.
type Block struct {
	Kind BlockKind `json:"type"`
	Text string    `json:"text,omitempty"`
	// Tokens is the size of an opaque block (no Text). For blocks with text it
	// is 0 and sizes come from a tokenizer.
	Tokens int `json:"tokens,omitempty"`
	// ID is a tool_use's id, or the tool_use_id a tool_result answers.
	ID string `json:"id,omitempty"`
	// Name is a tool_use's or tool schema's tool name, or the identity of an
	// opaque block.
	Name string `json:"name,omitempty"`
	// Input is a tool_use's input, as compact JSON.
	Input   string `json:"input,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// ScaffoldEnd, when > 0, is the byte offset in Text where a registered
	// static scaffold ends (skill, webhook and cron messages): the code that
	// built the message says so, nobody searches for a delimiter.
	ScaffoldEnd int `json:"scaffold_end,omitempty"`
	// Early marks a tool result the harness received before another result
	// of the same message but sends after it: the API takes a message's
	// results in tool_use order, and Claude Code's cache mark sits on the
	// result it received last, so an early result after it is input, not
	// cached, in that call (cacheplan.ClaudeCode).
	Early bool `json:"early,omitempty"`
}

// Opaque reports whether the block's content is unknown and only its size is.
func (b *Block) Opaque() bool { return b.Text == "" && b.Input == "" && b.Tokens > 0 }

// TokenText is the text of b as a tokenizer sees it: the tool name and
// input of a tool_use or tool schema, the text of everything else.
func (b *Block) TokenText() string {
	if b.Kind == ToolUse || b.Kind == ToolSchema {
		return b.Name + " " + b.Input
	}
	return b.Text
}

// Usage is what a provider billed for one call, in Anthropic's additive form:
// the prompt is Input + CacheWrite5m + CacheWrite1h + CacheRead.
type Usage struct {
	Input        int64 `json:"input"`
	CacheWrite5m int64 `json:"cache_write_5m"`
	CacheWrite1h int64 `json:"cache_write_1h"`
	CacheRead    int64 `json:"cache_read"`
	Output       int64 `json:"output"`
}

// Prompt is the total prompt size.
func (u Usage) Prompt() int64 {
	return addSat(addSat(u.Input, u.CacheWrite5m), addSat(u.CacheWrite1h, u.CacheRead))
}

// Writes is the total of cache writes.
func (u Usage) Writes() int64 { return addSat(u.CacheWrite5m, u.CacheWrite1h) }

// Add returns the field-wise sum, saturated at the int64 bounds: readers
// bound each call (MaxCallTokens), and a sum never wraps to a negative.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:        addSat(u.Input, v.Input),
		CacheWrite5m: addSat(u.CacheWrite5m, v.CacheWrite5m),
		CacheWrite1h: addSat(u.CacheWrite1h, v.CacheWrite1h),
		CacheRead:    addSat(u.CacheRead, v.CacheRead),
		Output:       addSat(u.Output, v.Output),
	}
}

// HitRate is the token-weighted cache hit rate, read ÷ prompt; 0 for an empty
// prompt.
func (u Usage) HitRate() float64 {
	p := u.Prompt()
	if p == 0 {
		return 0
	}
	return float64(u.CacheRead) / float64(p)
}

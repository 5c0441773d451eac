package codex

// The synthetic rollouts under testdata/layouts: one directory per layout
// a real Codex rollout can take (a fork, a remote and a local compaction,
// web search, reasoning across turns, the newer items, a per-turn window),
// written by the code below. No licensed rollout holds these layouts, so
// they are built from the Codex source (openai/codex, codex-rs, Apache-2.0;
// the files each layout follows are cited where it is written), in the
// field order Codex writes, and billed by a model of the API fitted to the
// API captures and the corpus (conv, below). `go test ./traces/codex -run
// TestLayoutFixtures -update` rewrites them; without -update the test fails
// if the files are not what this code writes.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
)

var update = flag.Bool("update", false, "rewrite the synthetic rollouts under testdata/layouts")

// TestLayoutFixtures checks the committed layouts are what the generator
// writes.
func TestLayoutFixtures(t *testing.T) {
	for name, files := range layouts(t) {
		for path, data := range files {
			full := filepath.Join("testdata", "layouts", name, path)
			if *update {
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, data, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(full)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s is not what the generator writes (go test ./traces/codex -run TestLayoutFixtures -update): %v", full, err)
			}
		}
	}
}

// Line payloads, their fields in the order Codex serializes them
// (codex-rs/protocol/src/protocol.rs: SessionMeta, TurnContextItem,
// TaskStartedEvent, TokenCountEvent, CompactedItem; models.rs:
// ResponseItem).

type sourceThreadSpawn struct {
	Subagent struct {
		ThreadSpawn struct {
			ParentThreadID string `json:"parent_thread_id"`
			Depth          int    `json:"depth"`
		} `json:"thread_spawn"`
	} `json:"subagent"`
}

type metaP struct {
	ID               string         `json:"id"`
	ForkedFromID     string         `json:"forked_from_id,omitempty"`
	Timestamp        string         `json:"timestamp"`
	Cwd              string         `json:"cwd"`
	Originator       string         `json:"originator"`
	CLIVersion       string         `json:"cli_version"`
	Source           any            `json:"source"`
	ThreadSource     string         `json:"thread_source,omitempty"`
	ModelProvider    string         `json:"model_provider"`
	BaseInstructions *textP         `json:"base_instructions,omitempty"`
	DynamicTools     []dynamicToolP `json:"dynamic_tools,omitempty"`
}

type textP struct {
	Text string `json:"text"`
}

type dynamicToolP struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	DeferLoading bool            `json:"deferLoading"`
}

type taskStartedP struct {
	Type                  string `json:"type"`
	TurnID                string `json:"turn_id"`
	StartedAt             int64  `json:"started_at"`
	ModelContextWindow    int    `json:"model_context_window"`
	CollaborationModeKind string `json:"collaboration_mode_kind"`
}

type taskCompleteP struct {
	Type             string `json:"type"`
	TurnID           string `json:"turn_id"`
	LastAgentMessage string `json:"last_agent_message"`
}

type turnAbortedP struct {
	Type   string `json:"type"`
	TurnID string `json:"turn_id"`
	Reason string `json:"reason"`
}

type turnContextP struct {
	TurnID         string         `json:"turn_id"`
	Cwd            string         `json:"cwd"`
	CurrentDate    string         `json:"current_date"`
	Timezone       string         `json:"timezone"`
	ApprovalPolicy string         `json:"approval_policy"`
	SandboxPolicy  map[string]any `json:"sandbox_policy"`
	Model          string         `json:"model"`
	Effort         string         `json:"effort"`
	Summary        string         `json:"summary"`
}

type contentP struct {
	Type             string `json:"type"`
	Text             string `json:"text,omitempty"`
	EncryptedContent string `json:"encrypted_content,omitempty"`
}

type messageP struct {
	Type    string     `json:"type"`
	Role    string     `json:"role"`
	Content []contentP `json:"content"`
	Phase   string     `json:"phase,omitempty"`
}

type agentMessageP struct {
	Type      string     `json:"type"`
	Author    string     `json:"author"`
	Recipient string     `json:"recipient"`
	Content   []contentP `json:"content"`
}

type reasoningP struct {
	Type             string `json:"type"`
	Summary          []any  `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
}

type functionCallP struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

type functionOutputP struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type webSearchP struct {
	Type   string         `json:"type"`
	Status string         `json:"status"`
	Action map[string]any `json:"action"`
}

type toolSearchCallP struct {
	Type      string         `json:"type"`
	CallID    string         `json:"call_id"`
	Status    string         `json:"status"`
	Execution string         `json:"execution"`
	Arguments map[string]any `json:"arguments"`
}

type toolSearchOutputP struct {
	Type      string            `json:"type"`
	CallID    string            `json:"call_id"`
	Status    string            `json:"status"`
	Execution string            `json:"execution"`
	Tools     []json.RawMessage `json:"tools"`
}

type compactionP struct {
	Type             string `json:"type"`
	EncryptedContent string `json:"encrypted_content"`
}

type compactedP struct {
	Message            string `json:"message"`
	ReplacementHistory []any  `json:"replacement_history,omitempty"`
}

type usageP struct {
	InputTokens           int `json:"input_tokens"`
	CachedInputTokens     int `json:"cached_input_tokens"`
	OutputTokens          int `json:"output_tokens"`
	ReasoningOutputTokens int `json:"reasoning_output_tokens"`
	TotalTokens           int `json:"total_tokens"`
}

func (u usageP) plus(v usageP) usageP {
	return usageP{u.InputTokens + v.InputTokens, u.CachedInputTokens + v.CachedInputTokens, u.OutputTokens + v.OutputTokens,
		u.ReasoningOutputTokens + v.ReasoningOutputTokens, u.TotalTokens + v.TotalTokens}
}

type tokenCountP struct {
	Type       string `json:"type"`
	Info       *infoP `json:"info"`
	RateLimits any    `json:"rate_limits"`
}

type infoP struct {
	TotalTokenUsage    usageP `json:"total_token_usage"`
	LastTokenUsage     usageP `json:"last_token_usage"`
	ModelContextWindow int    `json:"model_context_window"`
}

type userMessageEventP struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Images  []any  `json:"images"`
}

type rolledBackP struct {
	Type     string `json:"type"`
	NumTurns int    `json:"num_turns"`
}

// A rollout is one file's lines.
type rollout struct {
	buf bytes.Buffer
	// restamp, when set, is the time every line is stamped with: a fork's
	// copy of its parent's lines is written at once.
	restamp time.Time
	// keep keeps the lines as records too, for a fork to copy.
	keep    bool
	records []record
}

type record struct {
	at      time.Time
	typ     string
	payload any
}

func (r *rollout) line(at time.Time, typ string, payload any) {
	if r.keep {
		r.records = append(r.records, record{at, typ, payload})
	}
	if !r.restamp.IsZero() {
		at = r.restamp
	}
	b, err := json.Marshal(struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   any    `json:"payload"`
	}{at.UTC().Format("2006-01-02T15:04:05.000Z"), typ, payload})
	if err != nil {
		panic(err)
	}
	r.buf.Write(b)
	r.buf.WriteByte('\n')
}

// uuid7 is a UUIDv7 of time at (RFC 9562: 48 bits of Unix milliseconds
// first), its other bits from seq: ids in time order.
func uuid7(at time.Time, seq int) string {
	ms := uint64(at.UnixMilli())
	return fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", ms>>16, ms&0xffff, seq&0xfff, (seq*7919)&0xfff, uint64(seq)*0x9e3779b97f4a7c15&0xffffffffffff)
}

// encrypted is a synthetic Fernet token of n characters (Codex's
// encrypted_content starts "gAAAAAB"), deterministic in seed.
func encrypted(n, seed int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := []byte("gAAAAAB")
	x := uint64(seed)*0x9e3779b97f4a7c15 + 1
	for len(b) < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = append(b, alphabet[x%64])
	}
	return string(b[:n])
}

// An item of the API's context: what a request holds, in tokens (its
// framing included), under a key that tells one item from another.
type item struct {
	key    string
	tokens int
	// reasoning marks a reasoning item, of user turn turn; dropped marks
	// one the API does not send again (a searching call's).
	reasoning, dropped bool
	turn               int
	user               bool // a user message: a turn's start
	answered           bool // on a user message: the turn before it ended with an answer
}

// conv is the model of the API the fixtures are billed by, each rule from
// the evidence the replay's rules cite:
//
//   - a request is the unlogged floor (the server's preamble and the
//     built-in tool schemas), the instructions, and the context's items:
//     each item's o200k count plus 8 tokens, and 15 more per call (with
//     its first output item)
//     (../shared/traces/captures/liaohch3+claude-tap/trace_codex.json;
//     the corpus's Codex rollouts grow by exactly that, ±16 tokens);
//   - reasoning is sent again until the next user message after an
//     answer (prompt.StripsThinking), never after a server-side search;
//   - a search's results are billed in its call, and sent again after it,
//     uncached (corpus ff1815ba);
//   - the cache (gpt-5.4, in-memory) holds each request and what it
//     generated: a request reads its common prefix with the previous one,
//     into the previous output when it sends that back, in 128-token steps
//     from 1,024 (sim/provider.OpenAI); gpt-5.5 (gpt55: 24h retention)
//     holds the request only and reads on its 512-token grid, 512·k − 128
//     (sim/provider.CacheGrid).
type conv struct {
	count  func(string) int
	floor  int // the unlogged floor plus the instructions
	items  []item
	turn   int
	last   []item // the previous request
	lastAt time.Time
	output int // the previous call's output tokens
	extend bool
	gpt55  bool
}

func (c *conv) add(it item) { c.items = append(c.items, it) }

func (c *conv) text(key, s string) item { return item{key: key, tokens: c.count(s) + 8} }

// request is what a call sends: the items, less the reasoning the API
// drops.
func (c *conv) request() []item {
	lastUser := -1
	for i := len(c.items) - 1; i >= 0; i-- {
		if c.items[i].user && c.items[i].answered {
			lastUser = i
			break
		}
	}
	var out []item
	for i, it := range c.items {
		if it.reasoning && (it.dropped || i < lastUser) {
			continue
		}
		out = append(out, it)
	}
	return out
}

func size(items []item) int {
	n := 0
	for _, it := range items {
		n += it.tokens
	}
	return n
}

func steps(n int) int {
	if n < 1024 {
		return 0
	}
	return 1024 + (n-1024)/128*128
}

// bill is the usage of a call sent at at that adds extra tokens inside
// the call (a search's results) and generates output.
func (c *conv) bill(at time.Time, extra, output, reasoning int) usageP {
	req := c.request()
	prompt := c.floor + size(req) + extra
	cached := 0
	if !c.lastAt.IsZero() && at.Sub(c.lastAt) < 5*time.Minute {
		n := 0
		for n < len(req) && n < len(c.last) && req[n].key == c.last[n].key {
			n++
		}
		cached = c.floor + size(req[:n])
		if n == len(c.last) && n < len(req) && c.extend && c.output > 0 && !c.gpt55 {
			cached += min(c.output, size(req[n:]))
		}
		cached = min(cached, prompt)
	}
	c.last, c.lastAt, c.output = req, at, output
	c.extend = extra == 0
	read := steps(cached)
	if c.gpt55 {
		read = 0
		if g := (cached+128)/512*512 - 128; cached >= 1024 && g >= 1024 {
			read = g
		}
	}
	return usageP{InputTokens: prompt, CachedInputTokens: read, OutputTokens: output, ReasoningOutputTokens: reasoning, TotalTokens: prompt + output}
}

// A session writes a rollout and bills its calls.
type session struct {
	r      *rollout
	c      *conv
	id     string
	model  string
	window int
	now    time.Time
	turnID string
	seq    int
	calls  int
	total  usageP
	ids    int
}

const instructions = "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals."

func newSession(t *testing.T, at time.Time, hidden int) *session {
	enc, err := tiktoken.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	s := &session{r: &rollout{}, c: &conv{count: enc.Count}, model: "gpt-5.4", window: 258_400, now: at}
	s.c.floor = hidden + enc.Count(instructions)
	s.id = uuid7(at, 1)
	return s
}

func (s *session) tick(d time.Duration) time.Time {
	s.now = s.now.Add(d)
	return s.now
}

func (s *session) meta(p metaP) {
	if p.ID == "" {
		p.ID = s.id
	}
	p.Timestamp = s.now.UTC().Format("2006-01-02T15:04:05.000Z")
	p.Cwd, p.Originator, p.CLIVersion, p.ModelProvider = "/work/app", "codex-tui", "0.144.0", "openai"
	if p.Source == nil {
		p.Source = "cli"
	}
	if p.BaseInstructions == nil {
		p.BaseInstructions = &textP{instructions}
	}
	s.r.line(s.now, "session_meta", p)
}

// turn starts a user turn: task_started, the initial context on the first
// (codex-rs/core/src/codex.rs, build_initial_context), turn_context, the
// message.
func (s *session) turn(text string) {
	s.seq++
	s.turnID = uuid7(s.tick(time.Second), 100+s.seq)
	s.r.line(s.now, "event_msg", taskStartedP{"task_started", s.turnID, s.now.Unix(), s.window, "default"})
	if s.c.turn == 0 {
		dev := "<permissions instructions>\nFilesystem sandboxing: workspace-write. Approval policy: on-request.\n</permissions instructions>"
		env := "<environment_context>\n  <cwd>/work/app</cwd>\n  <shell>bash</shell>\n</environment_context>"
		s.r.line(s.now, "response_item", messageP{Type: "message", Role: "developer", Content: []contentP{{Type: "input_text", Text: dev}}})
		s.r.line(s.now, "response_item", messageP{Type: "message", Role: "user", Content: []contentP{{Type: "input_text", Text: env}}})
		s.c.add(s.c.text("dev", dev))
		s.c.add(s.c.text("env", env))
	}
	s.r.line(s.now, "turn_context", turnContextP{s.turnID, "/work/app", s.now.Format("2006-01-02"), "UTC", "on-request",
		map[string]any{"type": "workspace-write", "network_access": false}, s.model, "medium", "auto"})
	s.user(text)
}

func (s *session) user(text string) {
	s.c.turn++
	answered := true
	for i := len(s.c.items) - 1; i >= 0; i-- {
		if strings.HasPrefix(s.c.items[i].key, "call:") {
			answered = false
			break
		}
		if strings.HasPrefix(s.c.items[i].key, "answer:") {
			break
		}
	}
	it := s.c.text(fmt.Sprintf("user:%d", s.c.turn), text)
	it.user, it.answered = true, answered
	s.c.add(it)
	s.r.line(s.now, "response_item", messageP{Type: "message", Role: "user", Content: []contentP{{Type: "input_text", Text: text}}})
	s.r.line(s.now, "event_msg", userMessageEventP{"user_message", text, []any{}})
}

// A call is one model call's output.
type call struct {
	reasoning int      // reasoning tokens (one encrypted item)
	text      string   // an assistant message
	final     bool     // the message ends the turn
	tools     []string // function calls, name(arguments) as "name|args"
	searches  []map[string]any
	results   int // tokens of search results read inside the call
}

// call bills and writes one model call: its output items, then its
// token_count (codex-rs/core/src/codex.rs, the turn loop; the rollout
// records each output item as it completes and the usage after).
func (s *session) call(c call) []string {
	at := s.tick(4 * time.Second)
	s.calls++
	out := 0
	if c.text != "" {
		out += s.c.count(c.text)
	}
	for _, tl := range c.tools {
		out += s.c.count(tl)
	}
	out += c.reasoning + 10
	u := s.c.bill(at, c.results, out, c.reasoning)
	first := len(s.c.items) // the call's first output item
	var ids []string
	if c.reasoning > 0 {
		// The encrypted length follows the corpus's fit (reasoning.go):
		// about 900 characters plus 7.1 a token.
		enc := encrypted(reasoningOverhead+c.reasoning*1000/141, s.calls)
		s.r.line(at, "response_item", reasoningP{"reasoning", []any{}, enc})
		s.c.add(item{key: fmt.Sprintf("reasoning:%d", s.calls), tokens: c.reasoning, reasoning: true, dropped: len(c.searches) > 0, turn: s.c.turn})
	}
	for i, a := range c.searches {
		s.r.line(at, "response_item", webSearchP{"web_search_call", "completed", a})
		b, _ := json.Marshal(a)
		s.c.add(s.c.text(fmt.Sprintf("search:%d:%d", s.calls, i), string(b)))
	}
	if c.results > 0 {
		s.c.add(item{key: fmt.Sprintf("results:%d", s.calls), tokens: c.results})
	}
	if c.text != "" {
		phase, key := "commentary", "msg:"
		if c.final {
			phase, key = "final_answer", "answer:"
		}
		s.r.line(at, "response_item", messageP{Type: "message", Role: "assistant", Content: []contentP{{Type: "output_text", Text: c.text}}, Phase: phase})
		s.c.add(s.c.text(fmt.Sprintf("%s%d", key, s.calls), c.text))
	}
	for _, tl := range c.tools {
		name, args, _ := strings.Cut(tl, "|")
		s.ids++
		id := fmt.Sprintf("call_%04d", s.ids)
		ids = append(ids, id)
		s.r.line(at, "response_item", functionCallP{"function_call", name, args, id})
		s.c.add(s.c.text("call:"+id, name+" "+args))
	}
	for i := first; i < len(s.c.items); i++ {
		if !s.c.items[i].reasoning {
			s.c.items[i].tokens += 15 // the call's framing
			break
		}
	}
	s.total = s.total.plus(u)
	s.r.line(at.Add(50*time.Millisecond), "event_msg", tokenCountP{"token_count", &infoP{s.total, u, s.window}, nil})
	if c.final {
		s.r.line(at.Add(60*time.Millisecond), "event_msg", taskCompleteP{"task_complete", s.turnID, c.text})
	}
	return ids
}

func (s *session) output(id, text string) {
	at := s.tick(2 * time.Second)
	s.r.line(at, "response_item", functionOutputP{"function_call_output", id, text})
	s.c.add(s.c.text("out:"+id, text))
}

// layouts builds every layout: directory → file → bytes.
func layouts(t *testing.T) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for _, l := range []struct {
		name string
		f    func(*testing.T) map[string][]byte
	}{
		{"fork", forkLayout},
		{"compaction-remote", remoteCompactionLayout},
		{"compaction-local", localCompactionLayout},
		{"web-search", webSearchLayout},
		{"reasoning", reasoningLayout},
		{"items", itemsLayout},
		{"window", windowLayout},
	} {
		out[l.name] = l.f(t)
	}
	return out
}

// rolloutPath is where Codex writes a session's rollout
// (codex-rs/core/src/rollout/recorder.rs): sessions/YYYY/MM/DD/
// rollout-<local time>-<id>.jsonl.
func rolloutPath(at time.Time, id string) string {
	return filepath.Join("sessions", at.Format("2006"), at.Format("01"), at.Format("02"),
		"rollout-"+at.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
}

var t0 = time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)

// A read tool's output, long enough to matter.
func fileText(name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Chunk ID: %s\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n", name)
	for i := range lines {
		fmt.Fprintf(&b, "%4d\tfunc %s%d(x int) int { return x*%d + %d } // keeps the %s table in step\n", i+1, name, i, i+3, i*7, name)
	}
	return b.String()
}

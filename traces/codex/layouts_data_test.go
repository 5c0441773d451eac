package codex

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The layouts' stories. Each writes the lines Codex writes for it, billed
// by conv.

// forkLayout: a parent session and a subagent spawned from it with its
// whole history (codex-rs/core/src/agent/control/spawn.rs,
// spawn_forked_thread and keep_forked_rollout_item: messages of the
// system, developer and user roles, final answers, task events,
// token_counts, turn_context and compacted items are copied; reasoning,
// tool calls and outputs and commentary are not). The copy follows the
// fork's own session_meta and the parent's, every line stamped with the
// fork's time.
func forkLayout(t *testing.T) map[string][]byte {
	start := t0.Add(0 * time.Hour)
	p := newSession(t, start, 9000)
	p.r.keep = true
	p.meta(metaP{ThreadSource: "user"})
	p.turn("Add a -v flag to the CLI and wire it to the logger.")
	ids := p.call(call{reasoning: 120, text: "I'll read main.go first.", tools: []string{`exec_command|{"cmd":"sed -n 1,120p main.go"}`}})
	p.output(ids[0], fileText("main", 30))
	ids = p.call(call{reasoning: 80, tools: []string{`exec_command|{"cmd":"sed -n 1,80p log.go"}`}})
	p.output(ids[0], fileText("logger", 25))
	p.call(call{reasoning: 60, text: "Added -v: it sets the logger to debug level before the command runs.", final: true})
	p.turn("Also document it in the README.")
	ids = p.call(call{reasoning: 70, text: "Updating the README's flags section.", tools: []string{`exec_command|{"cmd":"grep -n Flags README.md"}`}})
	p.output(ids[0], "12:## Flags\n13:- `-q` quiet\n")
	p.call(call{reasoning: 40, text: "Documented -v under Flags in the README.", final: true})

	// The fork is made the next day: its copy is stamped then, its own
	// calls are billed then, the parent's the day before.
	at := p.tick(24 * time.Hour)
	f := newSession(t, at, 9000)
	f.id = uuid7(at, 2)
	src := sourceThreadSpawn{}
	src.Subagent.ThreadSpawn.ParentThreadID, src.Subagent.ThreadSpawn.Depth = p.id, 1
	f.meta(metaP{ForkedFromID: p.id, Source: src, ThreadSource: "subagent"})
	// The copy: the parent's lines that keep_forked_rollout_item keeps,
	// re-stamped with the fork's time.
	f.r.restamp = at
	for _, rec := range p.r.records {
		if forkKeeps(rec) {
			f.r.line(rec.at, rec.typ, rec.payload)
		}
	}
	f.r.restamp = time.Time{}
	// The fork starts from the copied messages; totals carry on.
	f.total = p.total
	for _, it := range p.c.items {
		if !it.reasoning && !strings.HasPrefix(it.key, "call:") && !strings.HasPrefix(it.key, "out:") && !strings.HasPrefix(it.key, "msg:") {
			f.c.add(it)
		}
	}
	f.c.turn = p.c.turn
	f.c.last, f.c.lastAt, f.c.output = p.c.last, p.c.lastAt, p.c.output
	f.seq = 10
	f.turn("Write a unit test for the -v flag.")
	ids = f.call(call{reasoning: 90, text: "Adding a test next to main_test.go.", tools: []string{`exec_command|{"cmd":"ls *_test.go"}`}})
	f.output(ids[0], "main_test.go\n")
	f.call(call{reasoning: 50, text: "Added TestVerboseFlag; it checks the logger level.", final: true})
	return map[string][]byte{rolloutPath(start, p.id): p.r.buf.Bytes(), rolloutPath(at, f.id): f.r.buf.Bytes()}
}

// forkKeeps is spawn.rs's keep_forked_rollout_item for a full-history
// fork.
func forkKeeps(rec record) bool {
	switch rec.typ {
	case "session_meta", "event_msg", "turn_context", "compacted":
		return true
	case "response_item":
		m, ok := rec.payload.(messageP)
		return ok && (m.Role != "assistant" || m.Phase == "final_answer")
	}
	return false
}

// remoteCompactionLayout: a turn, then a second whose history is compacted
// remotely before it goes on (CLI 0.142: the request carries a
// compaction_trigger, the response is an encrypted compaction item, and
// compact_remote.rs writes a compacted item with an empty message and the
// replacement history: the kept user messages, the developer message and
// the compaction item).
func remoteCompactionLayout(t *testing.T) map[string][]byte {
	start := t0.Add(1 * time.Hour)
	s := newSession(t, start, 9000)
	s.model, s.c.gpt55 = "gpt-5.5", true
	s.meta(metaP{ThreadSource: "user"})
	s.turn("Port the config loader to the new TOML library.")
	ids := s.call(call{reasoning: 150, text: "Reading the loader.", tools: []string{`exec_command|{"cmd":"sed -n 1,400p config.go"}`}})
	s.output(ids[0], fileText("config", 45))
	ids = s.call(call{reasoning: 110, tools: []string{`exec_command|{"cmd":"sed -n 1,300p config_test.go"}`}})
	s.output(ids[0], fileText("configtest", 35))
	s.call(call{reasoning: 80, text: "Ported: the loader now uses the new decoder; the tests pass.", final: true})
	s.turn("Now do the same for the plugin manifest parser.")
	// The compacting call: the whole context plus the trigger, answered
	// with the encrypted item (the captures bill as output about what
	// the item costs as input).
	at := s.tick(3 * time.Second)
	comp := encrypted(5348, 77)
	itemTokens := compactionTokens(len(comp))
	u := s.c.bill(at, 8, itemTokens-6, 0)
	s.r.line(at, "response_item", compactionP{"compaction", comp})
	s.total = s.total.plus(u)
	s.r.line(at.Add(50*time.Millisecond), "event_msg", tokenCountP{"token_count", &infoP{s.total, u, s.window}, nil})
	dev := "<permissions instructions>\nFilesystem sandboxing: workspace-write. Approval policy: on-request.\n</permissions instructions>"
	history := []any{
		messageP{Type: "message", Role: "user", Content: []contentP{{Type: "input_text", Text: "Port the config loader to the new TOML library."}}},
		messageP{Type: "message", Role: "user", Content: []contentP{{Type: "input_text", Text: "Now do the same for the plugin manifest parser."}}},
		messageP{Type: "message", Role: "developer", Content: []contentP{{Type: "input_text", Text: dev}}},
		compactionP{"compaction", comp},
	}
	s.r.line(at.Add(60*time.Millisecond), "compacted", compactedP{Message: "", ReplacementHistory: history})
	s.r.line(at.Add(60*time.Millisecond), "event_msg", map[string]string{"type": "context_compacted"})
	s.c.items = []item{
		s.c.text("user:1", "Port the config loader to the new TOML library."),
		s.c.text("user:2", "Now do the same for the plugin manifest parser."),
		s.c.text("dev", dev),
		{key: "compaction", tokens: itemTokens + 8},
	}
	ids = s.call(call{reasoning: 120, text: "Reading the manifest parser.", tools: []string{`exec_command|{"cmd":"sed -n 1,200p manifest.go"}`}})
	s.output(ids[0], fileText("manifest", 30))
	s.call(call{reasoning: 90, text: "Ported the manifest parser the same way.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

// localCompactionLayout: an older CLI's local compaction (/compact): the
// summarizing call's answer, then a compacted item with the summary and no
// replacement history, after which the context is the initial context,
// the user messages and the summary (codex-rs/core/src/compact.rs,
// run_compact_task_inner and build_compacted_history).
func localCompactionLayout(t *testing.T) map[string][]byte {
	start := t0.Add(2 * time.Hour)
	s := newSession(t, start, 7000)
	s.meta(metaP{})
	s.turn("Find why the cache test is flaky.")
	ids := s.call(call{reasoning: 100, text: "Running it in a loop.", tools: []string{`exec_command|{"cmd":"go test -run TestCache -count 20 ./cache"}`}})
	s.output(ids[0], fileText("cache", 25))
	ids = s.call(call{reasoning: 90, tools: []string{`exec_command|{"cmd":"sed -n 1,200p cache/cache.go"}`}})
	s.output(ids[0], fileText("cachego", 35))
	s.call(call{reasoning: 70, text: "The test races on the clock: it reads time.Now twice.", final: true})
	// /compact: a task of its own; the summarization prompt is sent but
	// not logged, the answer is.
	s.seq++
	s.turnID = uuid7(s.tick(20*time.Second), 100+s.seq)
	s.r.line(s.now, "event_msg", taskStartedP{"task_started", s.turnID, s.now.Unix(), s.window, "default"})
	summary := "The flaky TestCache reads time.Now twice, so an entry can expire between the reads; injecting a clock fixes it. Files: cache/cache.go, cache/cache_test.go."
	prompt := "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task."
	s.c.add(s.c.text("compact-prompt", prompt))
	at := s.tick(6 * time.Second)
	u := s.c.bill(at, 0, s.c.count(summary)+10, 0)
	s.r.line(at, "response_item", messageP{Type: "message", Role: "assistant", Content: []contentP{{Type: "output_text", Text: summary}}})
	s.total = s.total.plus(u)
	s.r.line(at.Add(50*time.Millisecond), "event_msg", tokenCountP{"token_count", &infoP{s.total, u, s.window}, nil})
	msg := "Another language model started to solve this problem and produced a summary of its thinking process.\n" + summary
	s.r.line(at.Add(60*time.Millisecond), "compacted", compactedP{Message: msg})
	s.c.items = []item{s.c.items[0], s.c.items[1], s.c.items[2], s.c.text("summary", msg)}
	s.turn("Inject the clock and rerun the test.")
	ids = s.call(call{reasoning: 110, text: "Adding a clock field.", tools: []string{`exec_command|{"cmd":"go test -count 50 ./cache"}`}})
	s.output(ids[0], "ok  \texample.com/app/cache\t1.204s\n")
	s.call(call{reasoning: 40, text: "The clock is injected; 50 runs pass.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

// webSearchLayout: a call that searches the web (server-side: reasoning,
// web_search_call items and the answer are logged, the pages are not),
// then the turn goes on.
func webSearchLayout(t *testing.T) map[string][]byte {
	start := t0.Add(3 * time.Hour)
	s := newSession(t, start, 9000)
	s.meta(metaP{ThreadSource: "user"})
	s.turn("What changed in encoding/json in the latest Go release? Then update our decoder.")
	ids := s.call(call{reasoning: 180, text: "Checking the release notes, then the decoder.",
		searches: []map[string]any{
			{"type": "search", "query": "Go release notes encoding/json changes", "queries": []string{"Go release notes encoding/json changes"}},
			{"type": "open_page", "url": "https://go.dev/doc/go1.26"},
		}, results: 3300, tools: []string{`exec_command|{"cmd":"sed -n 1,160p decoder.go"}`}})
	s.output(ids[0], fileText("decoder", 35))
	ids = s.call(call{reasoning: 90, tools: []string{`exec_command|{"cmd":"go test ./..."}`}})
	s.output(ids[0], "ok  \texample.com/app\t0.412s\n")
	s.call(call{reasoning: 30, text: "encoding/json now rejects duplicate keys by default; the decoder opts out where we relied on it.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

// reasoningLayout: reasoning sent again within a turn, dropped after an
// answered turn, kept after an interrupted one.
func reasoningLayout(t *testing.T) map[string][]byte {
	start := t0.Add(4 * time.Hour)
	s := newSession(t, start, 9000)
	s.meta(metaP{ThreadSource: "user"})
	s.turn("Rename the Store interface to Repository across the codebase.")
	ids := s.call(call{reasoning: 400, text: "Finding the uses.", tools: []string{`exec_command|{"cmd":"rg -n Store"}`}})
	s.output(ids[0], fileText("uses", 30))
	s.call(call{reasoning: 350, text: "Renamed Store to Repository in 14 files.", final: true})
	s.turn("Now update the docs.")
	ids = s.call(call{reasoning: 300, text: "Searching the docs.", tools: []string{`exec_command|{"cmd":"rg -n Store docs/"}`}})
	// The person interrupts the running command: its output, the note
	// Codex adds, and the abort (codex-rs/core/src/codex.rs, on
	// interrupt).
	s.output(ids[0], "aborted by user after 4.1s")
	note := "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"
	s.r.line(s.now, "response_item", messageP{Type: "message", Role: "user", Content: []contentP{{Type: "input_text", Text: note}}})
	s.c.add(s.c.text("aborted", note))
	s.r.line(s.now, "event_msg", turnAbortedP{"turn_aborted", s.turnID, "interrupted"})
	s.turn("Skip the docs; just fix the README.")
	ids = s.call(call{reasoning: 200, tools: []string{`exec_command|{"cmd":"rg -n Store README.md"}`}})
	s.output(ids[0], "3:The Store keeps sessions.\n")
	s.call(call{reasoning: 60, text: "README updated.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

// itemsLayout: the newer items: dynamic tools in the session_meta (one
// deferred, loaded by tool search), a world_state line, a tool search and
// its output, an inter-agent message, a rollback of the last turn, and an
// item of a type not known yet.
func itemsLayout(t *testing.T) map[string][]byte {
	start := t0.Add(5 * time.Hour)
	s := newSession(t, start, 8000)
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look up"}},"required":["query"]}`)
	tools := []dynamicToolP{
		{"lookup_ticket", "Look up a ticket in the tracker by id or text and return its fields.", schema, false},
		{"deploy_preview", "Deploy the branch to a preview environment and return its URL.", schema, true},
	}
	// The dynamic tool the request carries is part of its floor.
	def, _ := json.Marshal(map[string]any{"type": "function", "name": tools[0].Name, "description": tools[0].Description, "strict": false, "parameters": schema})
	s.c.floor += s.c.count(string(def)) + 8
	s.meta(metaP{ThreadSource: "user", DynamicTools: tools})
	s.r.line(s.now, "world_state", map[string]any{"full": true, "state": map[string]any{"cwd": "/work/app", "approval_policy": "on-request"}})
	s.turn("Open a preview deploy for ticket 42's branch.")
	s.calls++
	at := s.tick(4 * time.Second)
	args := map[string]any{"query": "deploy preview environment"}
	u := s.c.bill(at, 0, 40, 0)
	s.r.line(at, "response_item", toolSearchCallP{"tool_search_call", "call_ts1", "completed", "client", args})
	b, _ := json.Marshal(args)
	s.c.add(item{key: "call:ts1", tokens: s.c.count("tool_search "+string(b)) + 8 + 15})
	s.total = s.total.plus(u)
	s.r.line(at.Add(50*time.Millisecond), "event_msg", tokenCountP{"token_count", &infoP{s.total, u, s.window}, nil})
	loaded := []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"type":"function","name":%q,"description":%q,"strict":false,"parameters":%s}`, tools[1].Name, tools[1].Description, schema))}
	at = s.tick(time.Second)
	s.r.line(at, "response_item", toolSearchOutputP{"tool_search_output", "call_ts1", "completed", "client", loaded})
	lb, _ := json.Marshal(loaded)
	s.c.add(s.c.text("out:ts1", string(lb)))
	ids := s.call(call{reasoning: 60, tools: []string{`deploy_preview|{"query":"ticket-42"}`}})
	s.output(ids[0], `{"url":"https://preview-42.example.dev"}`)
	s.call(call{reasoning: 30, text: "Preview is up at https://preview-42.example.dev.", final: true})
	// A message from another agent of the session, encrypted
	// (codex-rs ResponseItem::AgentMessage).
	at = s.tick(30 * time.Second)
	enc := encrypted(1600, 9)
	s.r.line(at, "response_item", agentMessageP{"agent_message", "reviewer", "main", []contentP{{Type: "encrypted_content", EncryptedContent: enc}}})
	s.c.add(item{key: "agent", tokens: agentMessageTokens(len(enc)) + 8, user: true, answered: true})
	s.call(call{reasoning: 40, text: "The reviewer approved the preview.", final: true})
	s.turn("Post the URL on the ticket.")
	ids = s.call(call{reasoning: 50, tools: []string{`lookup_ticket|{"query":"42"}`}})
	s.output(ids[0], `{"id":42,"title":"Preview deploys","status":"open"}`)
	s.call(call{reasoning: 20, text: "Posted.", final: true})
	s.turn("Also close it.")
	s.call(call{reasoning: 20, text: "Closed ticket 42.", final: true})
	// /undo of the last turn: thread_rolled_back drops it from the
	// conversation (codex-rs/core/src/context_manager/history.rs,
	// drop_last_n_user_turns).
	at = s.tick(10 * time.Second)
	s.r.line(at, "event_msg", rolledBackP{"thread_rolled_back", 1})
	for i := len(s.c.items) - 1; i >= 0; i-- {
		if s.c.items[i].key == fmt.Sprintf("user:%d", s.c.turn) {
			s.c.items = s.c.items[:i]
			break
		}
	}
	s.r.line(s.tick(time.Second), "response_item", map[string]any{"type": "future_item", "payload": "not known yet"})
	s.turn("Leave it open; add a comment instead.")
	s.call(call{reasoning: 20, text: "Commented on ticket 42.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

// windowLayout: the context window changes from one turn to the next
// (task_started and token_count carry the turn's; issue 23 saw 121,600 and
// 353,400 within one session).
func windowLayout(t *testing.T) map[string][]byte {
	start := t0.Add(6 * time.Hour)
	s := newSession(t, start, 9000)
	s.window = 121_600
	s.meta(metaP{ThreadSource: "user"})
	s.turn("Summarize what this repository does.")
	ids := s.call(call{reasoning: 60, tools: []string{`exec_command|{"cmd":"cat README.md"}`}})
	s.output(ids[0], fileText("readme", 30))
	s.call(call{reasoning: 40, text: "It is a small HTTP router with middleware.", final: true})
	s.window = 353_400
	s.turn("List its exported functions.")
	ids = s.call(call{reasoning: 50, tools: []string{`exec_command|{"cmd":"go doc -all ."}`}})
	s.output(ids[0], fileText("doc", 20))
	s.call(call{reasoning: 30, text: "New, Handle, Use, ServeHTTP.", final: true})
	return map[string][]byte{rolloutPath(start, s.id): s.r.buf.Bytes()}
}

package hermes

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

func checkCompacted(t *testing.T, s *traces.Session) {
	t.Helper()
	if got, want := tracetest.Kinds(s), "user assistant tool_result assistant compaction user user assistant"; got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if len(s.Floor) != 1 || s.Floor[0].Text != "You are Hermes, an AI agent." {
		t.Errorf("floor %+v", s.Floor)
	}
	if !s.Events[5].Summary || s.Events[4].Meta["mode"] != "in_place" {
		t.Errorf("summary %+v compaction %+v", s.Events[5], s.Events[4])
	}
	if got := s.Events[1].Blocks; len(got) != 1 || got[0].Kind != traces.ToolUse || got[0].ID != "call_1" || got[0].Input != `{"command":"ls"}` {
		t.Errorf("tool call %+v", got)
	}
	if got := s.Events[7].Blocks; len(got) != 2 || got[0].Kind != traces.Thinking {
		t.Errorf("reasoning %+v", got)
	}
	if got, want := s.Events[0].Time, time.Date(2025, 1, 1, 9, 0, 0, 125e6, time.UTC); !got.Equal(want) {
		t.Errorf("first time %v, want %v", got, want)
	}
	for _, e := range s.Events {
		if e.Usage != nil {
			t.Errorf("event has per-call usage %+v; hermes records none", e.Usage)
		}
	}
	u, calls, ok := Totals(s)
	if want := (traces.Usage{Input: 1830, CacheRead: 20480, CacheWrite5m: 6144, Output: 412}); !ok || u != want || calls != 4 {
		t.Errorf("Totals = %+v, %d, %v; want %+v, 4", u, calls, ok, want)
	}
	if s.Events[0].Meta["token_count"] != "4" || s.Events[3].Meta["finish_reason"] != "stop" {
		t.Errorf("meta %v %v", s.Events[0].Meta, s.Events[3].Meta)
	}
}

func TestExportJSON(t *testing.T) {
	ss, w, err := Import("testdata/export.json")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	s := ss[0]
	if s.ID != "s1" || s.Source != traces.SourceCLI || s.Model != "anthropic/claude-sonnet-4.5" || s.Format != Format {
		t.Errorf("session %+v", s)
	}
	checkCompacted(t, s)
	if w.Total() != 0 {
		t.Errorf("warnings: %s", w)
	}
}

func TestExportJSONL(t *testing.T) {
	ss, w, err := Import("testdata/export.jsonl")
	require.NoError(t, err)
	require.Len(t, ss, 2)
	p, c := ss[0], ss[1]
	if got := tracetest.Kinds(p); got != "user assistant" || p.Source != "telegram" {
		t.Errorf("parent %s source %s", got, p.Source)
	}
	if len(p.Children) != 1 || p.Children[0] != "c1" || c.Parent != "p1" || c.TenantID() != "p1" {
		t.Errorf("link: children %v parent %q", p.Children, c.Parent)
	}
	if got := tracetest.Kinds(c); got != "compaction user user assistant" {
		t.Errorf("child events %s", got)
	}
	if c.Events[0].Meta["mode"] != "rotate" || !c.Events[1].Summary || c.Events[1].Meta["role"] != "assistant" {
		t.Errorf("child compaction %+v summary %+v", c.Events[0], c.Events[1])
	}
	want := "warning: kept event whose timestamp goes backwards (clamped to the previous one): 1 line (first at testdata/export.jsonl:4)\n" +
		"warning: kept inactive message that is not marked compacted: 1 line (first at testdata/export.jsonl:4)\n" +
		"warning: skipped line with invalid JSON: 1 line (first at testdata/export.jsonl:2)\n" +
		"warning: skipped session without id: 1 line (first at testdata/export.jsonl:3)\n"
	if got := w.String(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
	var found bool
	for _, n := range p.Notes {
		found = found || strings.HasPrefix(n, "ended by compression")
	}
	if !found {
		t.Errorf("parent notes %q", p.Notes)
	}
}

func TestExportSyntaxError(t *testing.T) {
	_, err := ReadExport(strings.NewReader("{\n  \"id\": \"x\",\n  \"messages\": [}\n"), "e.json", &traces.Warnings{})
	if err == nil || !strings.HasPrefix(err.Error(), "e.json:3: ") {
		t.Errorf("error = %v, want e.json:3: ...", err)
	}
}

// schema is the subset of hermes' SCHEMA_SQL (reference hermes.md §9) the
// importer reads, plus a few columns it must ignore.
const schema = `
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
  system_prompt TEXT, system_prompt_hash TEXT, parent_session_id TEXT,
  started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
  message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
  cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
  reasoning_tokens INTEGER DEFAULT 0, api_call_count INTEGER DEFAULT 0,
  estimated_cost_usd REAL, actual_cost_usd REAL, title TEXT, archived INTEGER DEFAULT 0);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
  timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
  platform_message_id TEXT, _compressed_summary INTEGER DEFAULT 0,
  active INTEGER DEFAULT 1, compacted INTEGER DEFAULT 0);
`

func TestStateDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec(schema)
	require.NoError(t, err)
	const t0 = 1735722000.125
	_, err = db.Exec(`INSERT INTO system_prompts VALUES ('h1', 'You are Hermes, an AI agent.')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO sessions (id, source, model, system_prompt_hash, started_at, end_reason,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, api_call_count, estimated_cost_usd)
		VALUES ('s1', 'cli', 'anthropic/claude-sonnet-4.5', 'h1', ?, 'user_exit', 1830, 412, 20480, 6144, 60, 4, 0.0412),
		       ('s2', 'cron', 'gpt-5', NULL, ?, NULL, 0, 0, 0, 0, 0, 0, NULL)`, t0-1, t0+1000)
	require.NoError(t, err)
	tc := `[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"ls\"}"}}]`
	ins := `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, timestamp, token_count, finish_reason, reasoning, _compressed_summary, active, compacted)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	rows := [][]any{
		{"s1", "user", "List my files.", nil, nil, t0, 4, nil, nil, 0, 0, 1},
		{"s1", "assistant", "", nil, tc, t0 + 2.5, nil, "tool_calls", nil, 0, 0, 1},
		{"s2", "user", "nightly report", nil, nil, t0 + 1000, nil, nil, nil, 0, 1, 0},
		{"s1", "tool", "a.txt\nb.txt", "call_1", nil, t0 + 3, nil, nil, nil, 0, 0, 1},
		{"s1", "assistant", "You have a.txt and b.txt.", nil, nil, t0 + 5, nil, "stop", nil, 0, 0, 1},
		{"s1", "user", "[CONTEXT COMPACTION — REFERENCE ONLY] summary", nil, nil, t0 + 600, nil, nil, nil, 1, 1, 0},
		{"s1", "user", "Now delete b.txt.", nil, nil, t0 + 601, nil, nil, nil, 0, 1, 0},
		{"s1", "assistant", "Deleted.", nil, nil, t0 + 604, nil, "stop", "The user wants b.txt removed.", 0, 1, 0},
		{"s2", "assistant", "done", nil, "{not json", t0 + 1010, nil, nil, nil, 0, 1, 0},
	}
	for _, r := range rows {
		_, err := db.Exec(ins, r...)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	ss, w, err := Import(path) // sniffs the SQLite header
	require.NoError(t, err)
	require.Len(t, ss, 2)
	checkCompacted(t, ss[0])
	if s2 := ss[1]; s2.Source != traces.SourceCron || tracetest.Kinds(s2) != "user assistant" {
		t.Errorf("s2 source %q events %s", s2.Source, tracetest.Kinds(s2))
	}
	want := "warning: kept message whose tool_calls are not a valid array (calls dropped): 1 line (first at " + path + "#messages:9)\n"
	if got := w.String(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}

	// Read-only: the importer must not have created a WAL or journal.
	for _, side := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + side); err == nil {
			t.Errorf("import left %s behind", side)
		}
	}
}

func TestStateDBOldSchema(t *testing.T) {
	// An old schema without the compaction columns or system_prompts table.
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL);
		CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, timestamp REAL NOT NULL);
		INSERT INTO sessions VALUES ('old', 'cli', 'gpt-4o', 1700000000);
		INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old', 'user', 'hi', 1700000001), ('old', 'assistant', 'hello', 1700000002);`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	ss, w, err := ReadDB(path)
	require.NoError(t, err)
	if len(ss) != 1 || tracetest.Kinds(ss[0]) != "user assistant" || w.Total() != 0 {
		t.Fatalf("sessions %d, warnings %s", len(ss), w)
	}

	bad := filepath.Join(t.TempDir(), "other.db")
	db, err = sql.Open("sqlite", "file:"+bad)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (x)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	if _, _, err := ReadDB(bad); err == nil || !strings.Contains(err.Error(), "not a hermes state.db") {
		t.Errorf("error = %v", err)
	}
}

func TestRoundTripNative(t *testing.T) {
	for _, f := range []string{"testdata/export.json", "testdata/export.jsonl"} {
		ss, _, err := Import(f)
		require.NoError(t, err)
		for _, s := range ss {
			tracetest.RoundTrip(t, s)
		}
	}
}

func FuzzHermesExport(f *testing.F) {
	for _, name := range []string{"export.json", "export.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"id":"x","segments":[{"id":"a","messages":[{"role":"tool","tool_call_id":1}]}]}`))
	f.Add([]byte(`{"id":"big","input_tokens":999999999999999999,"output_tokens":-5,"api_call_count":1e30,"messages":[]}`))
	f.Add([]byte(`[{"id":"x","started_at":"nan","messages":[{"role":"user","active":"0","compacted":true,"timestamp":1e300}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ss, err := ReadExport(bytes.NewReader(data), "fuzz", &traces.Warnings{})
		if err != nil {
			return
		}
		for _, s := range ss {
			if err := traces.WriteSession(&bytes.Buffer{}, s); err != nil {
				t.Fatalf("write: %v", err)
			}
			tracetest.Bounded(t, s)
			if u, n, ok := Totals(s); ok && (u.Input < 0 || u.CacheRead < 0 || u.CacheWrite5m < 0 || u.Output < 0 || n < 0) {
				t.Fatalf("negative totals %+v in %d calls", u, n)
			}
		}
	})
}

// An export whose first session is longer than a read buffer is still JSONL.
func TestExportLongFirstLine(t *testing.T) {
	row := func(id, prompt string) string {
		return `{"id": "` + id + `", "model": "gpt-5", "system_prompt": "` + prompt + `", "started_at": 1735722000, "messages": [{"id": 1, "role": "user", "content": "hi", "timestamp": 1735722001}]}`
	}
	in := row("long", strings.Repeat("x", 70<<10)) + "\n" + row("short", "be brief") + "\n"
	ss, err := ReadExport(strings.NewReader(in), "e.jsonl", &traces.Warnings{})
	require.NoError(t, err)
	require.Len(t, ss, 2)
	require.Equal(t, "long", ss[0].ID)
	require.Equal(t, "short", ss[1].ID)
}

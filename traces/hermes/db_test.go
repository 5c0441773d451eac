package hermes

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

func execAll(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

const oldSchema = `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL);
	CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, timestamp REAL NOT NULL);
	INSERT INTO sessions VALUES ('old', 'cli', 'gpt-4o', 1700000000);
	INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old', 'user', 'hi', 1700000001), ('old', 'assistant', 'hello', 1700000002);`

// TestStateDBRecursiveView pins issue 10's hang: a sessions view over a
// recursive CTE never returned and filled the temp directory. Views are
// refused before any query runs.
func TestStateDBRecursiveView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, `CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`CREATE VIEW sessions AS WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id+1 FROM n) SELECT CAST(id AS TEXT) AS id, 'cli' AS source, 0.0 AS started_at FROM n ORDER BY id DESC`)
	start := time.Now()
	_, _, err := ReadDB(path)
	if err == nil || !strings.Contains(err.Error(), "sessions is a view") {
		t.Errorf("error = %v, want sessions refused as a view", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestStateDBDeadline: every query runs under the deadline; once it has
// passed the read stops with an error saying so.
func TestStateDBDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, oldSchema)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := ReadDBWithin(ctx, path, DBLimits{Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("error = %v, want interrupted", err)
	}
	ss, _, err := ReadDBWithin(context.Background(), path, DBLimits{Timeout: time.Minute, HeapBytes: 64 << 20})
	require.NoError(t, err)
	require.Len(t, ss, 1)
}

// TestStateDBWAL pins "reading one creates a -shm file beside the input"
// and the read-only WAL directory: a WAL database is read without creating
// anything, with its log when hermes holds it open, and without it (and a
// warning) otherwise.
func TestStateDBWAL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	execAll(t, path, "PRAGMA journal_mode=WAL", oldSchema)
	// A writer holding the database open with writes still in the log.
	w, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA wal_autocheckpoint=0", "INSERT INTO sessions VALUES ('new', 'cli', 'gpt-4o', 1700000100)",
		"INSERT INTO messages (session_id, role, content, timestamp) VALUES ('new', 'user', 'hi', 1700000101)"} {
		_, err := w.Exec(s)
		require.NoError(t, err)
	}
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.NotZero(t, fi.Size())

	ss, ws, err := ReadDB(path)
	require.NoError(t, err)
	if len(ss) != 2 || ws.Total() != 0 {
		t.Errorf("live WAL: %d sessions (want 2, the log read), warnings %v", len(ss), ws.List())
	}

	// The same files copied without -shm (hermes gone, log not
	// checkpointed): read without the log, nothing created.
	cp := filepath.Join(t.TempDir(), "state.db")
	for _, side := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + side)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cp+side, b, 0o444))
	}
	ss, ws, err = ReadDB(cp)
	require.NoError(t, err)
	if len(ss) < 1 || ws.Len() != 1 || ws.List()[0].Reason != WarnWALSkipped {
		t.Errorf("copied WAL: %d sessions, warnings %v", len(ss), ws.List())
	}
	if _, err := os.Stat(cp + "-shm"); err == nil {
		t.Errorf("reading created %s-shm", cp)
	}
}

// TestStateDBBadTotals pins "token counts near 1e18 wrap to negative
// totals" for hermes: a session row's totals are bounded, with a warning
// naming the session.
func TestStateDBBadTotals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, started_at REAL,
		input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, api_call_count INTEGER)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'gpt-4o', 1700000000, 999999999999999999, -5, 100, 0, 2)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hi', 1700000001)`)
	ss, w, err := ReadDB(path)
	require.NoError(t, err)
	u, calls, ok := Totals(ss[0])
	if !ok || u != (traces.Usage{CacheRead: 100}) || calls != 2 {
		t.Errorf("totals %+v in %d calls", u, calls)
	}
	got := map[string]string{}
	for _, x := range w.List() {
		got[x.Reason] = x.First
	}
	for _, r := range []string{traces.WarnHugeTokens, traces.WarnNegativeTokens} {
		if got[r] != path+"#sessions:s" {
			t.Errorf("warnings %v: want %q at %s#sessions:s", w.List(), r, path)
		}
	}
}

// withUncommitted runs f while a writer holds a transaction on path that
// set every session's input_tokens to 1999998 and spilled its pages into
// the database file (a tiny page cache), with the originals in
// path-journal.
func withUncommitted(t *testing.T, path string, f func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=cache_size(2)")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec("UPDATE sessions SET input_tokens = 1999998")
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		_, err := tx.Exec("INSERT INTO pad VALUES (randomblob(4000))")
		require.NoError(t, err)
	}
	f()
}

// TestStateDBJournal pins issue 27's "SQLite read as SQLite reads it": a
// state.db with a hot rollback journal (a writer killed mid-transaction)
// was opened immutable=1, which ignores journals, and its uncommitted
// pages were read as data (1,999,998 input tokens where sqlite3 reads
// 189,820). The journal is rolled back in a private copy (the input is
// untouched, with a warning); while a writer holds the lock, the read is
// refused naming it.
func TestStateDBJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	execAll(t, path, "PRAGMA journal_mode=DELETE",
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, started_at REAL,
		input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, api_call_count INTEGER)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`CREATE TABLE pad (x BLOB)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'claude-sonnet-4-5', 1700000000, 189820, 500, 0, 0, 3)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hi', 1700000001), ('s', 'assistant', 'ok', 1700000002)`)

	hot := filepath.Join(t.TempDir(), "state.db")
	withUncommitted(t, path, func() {
		// The writer holds the lock: refused, naming the file.
		_, _, err := ReadDB(path)
		if err == nil || !strings.Contains(err.Error(), path+": locked by a writer") {
			t.Errorf("read while a writer holds the lock: %v", err)
		}
		// Its files as a crash leaves them: a hot journal.
		for _, side := range []string{"", "-journal"} {
			b, err := os.ReadFile(path + side)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(hot+side, b, 0o444))
		}
	})
	before := map[string][]byte{}
	for _, side := range []string{"", "-journal"} {
		before[side], _ = os.ReadFile(hot + side)
	}
	require.NoError(t, os.Chmod(filepath.Dir(hot), 0o555)) // nothing may be created beside it
	defer os.Chmod(filepath.Dir(hot), 0o755)
	ss, w, err := ReadDB(hot)
	require.NoError(t, err)
	u, _, _ := Totals(ss[0])
	if u.Input != 189820 {
		t.Errorf("input tokens %d, want 189820 (the last commit; 1999998 is the uncommitted write)", u.Input)
	}
	if w.Len() != 1 || w.List()[0].Reason != WarnHotJournal || w.List()[0].First != hot+":0" {
		t.Errorf("warnings %v, want the hot journal at %s", w.List(), hot)
	}
	for side, b := range before {
		if now, _ := os.ReadFile(hot + side); string(now) != string(b) {
			t.Errorf("reading changed %s%s", hot, side)
		}
	}
}

// TestStateDBTextInNumbers pins issue 27's "text in an integer column
// refuses the whole database": SQLite stores what a row was given
// whatever the column's type. Text in a count is counted as 0 and warned,
// as docs/bad-input.md promises, the rest of the row and the database
// read; NULL ids and orphan messages are warned, not fatal or silent.
func TestStateDBTextInNumbers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, `CREATE TABLE sessions (id TEXT, source TEXT, model TEXT, started_at REAL,
		input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, api_call_count INTEGER,
		estimated_cost_usd REAL)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL, token_count INTEGER, active INTEGER)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'gpt-4o', 'soon', 'lots', 40, '300', 0, 'two', 'free')`,
		`INSERT INTO sessions VALUES (NULL, 'cli', 'gpt-4o', 1700000000, 1, 1, 1, 1, 1, 0)`,
		`INSERT INTO messages (session_id, role, content, timestamp, token_count, active) VALUES ('s', 'user', 'hi', 'noon', 'many', 'yes')`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'assistant', 'ok', 1700000002)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('gone', 'user', 'lost', 1700000003)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES (NULL, 'user', 'lost', 1700000003)`)
	ss, w, err := ReadDB(path)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	u, calls, ok := Totals(ss[0])
	if !ok || u != (traces.Usage{Output: 40, CacheRead: 300}) || calls != 0 {
		t.Errorf("totals %+v in %d calls", u, calls)
	}
	if tracetest.Kinds(ss[0]) != "user assistant" {
		t.Errorf("events %s", tracetest.Kinds(ss[0]))
	}
	got := map[string]int{}
	for _, x := range w.List() {
		got[x.Reason] = x.Count
	}
	want := map[string]int{traces.WarnHugeTokens: 3, WarnNoSession: 1, WarnOrphanMessage: 2, WarnBadTime: 1}
	for r, n := range want {
		if got[r] != n {
			t.Errorf("%q warned %d times, want %d (all: %v)", r, got[r], n, w.List())
		}
	}
	for _, n := range ss[0].Notes {
		if strings.Contains(n, "NaN") {
			t.Errorf("note %q", n)
		}
	}

	// An export's text in a count is warned about the same way (it was
	// read as absent, in silence).
	ew := &traces.Warnings{}
	ex, err := ReadExport(strings.NewReader(`{"id":"e","source":"cli","started_at":1700000000,"input_tokens":"lots","output_tokens":"40","api_call_count":{},`+
		`"messages":[{"role":"user","content":"hi","timestamp":1700000001},{"role":"assistant","content":"ok","timestamp":1700000002}]}`), "export.json", ew)
	require.NoError(t, err)
	u, _, _ = Totals(ex[0])
	if u != (traces.Usage{Output: 40}) || ew.Len() != 1 || ew.List()[0].Reason != traces.WarnHugeTokens || ew.List()[0].Count != 2 {
		t.Errorf("export: totals %+v, warnings %v", u, ew.List())
	}
}

// TestStateDBMissingColumn pins issue 27's "a missing input_tokens column
// reads as 0 with a 100 % hit rate and no warning": each usage column a
// sessions table with usage lacks is warned about.
func TestStateDBMissingColumn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, started_at REAL,
		output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, api_call_count INTEGER)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'gpt-4o', 1700000000, 40, 1000, 0, 2)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hi', 1700000001)`)
	_, w, err := ReadDB(path)
	require.NoError(t, err)
	want := fmt.Sprintf(WarnMissingColumn, "input_tokens")
	if w.Len() != 1 || w.List()[0].Reason != want || w.List()[0].First != path+"#sessions" {
		t.Errorf("warnings %v, want %q", w.List(), want)
	}
}

// TestStateDBSideFilesNotRegular: a FIFO planted as state.db-journal made
// the read wait for a writer forever, and a link to /dev/zero there was
// copied (to roll it back) until the disk filled. A database, journal, log
// or shared-memory file that is not a regular file is refused, named.
func TestStateDBSideFilesNotRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	execAll(t, path, "PRAGMA journal_mode=DELETE",
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, started_at REAL, input_tokens INTEGER)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'gpt-4o', 1700000000, 10)`)
	journal := path + "-journal"
	plant := map[string]func() error{
		"a FIFO":              func() error { return syscall.Mkfifo(journal, 0o644) },
		"a link to /dev/null": func() error { return os.Symlink(os.DevNull, journal) },
	}
	for _, name := range []string{"a FIFO", "a link to /dev/null"} {
		if err := plant[name](); err != nil {
			t.Skipf("%s: %v", name, err)
		}
		done := make(chan error, 1)
		go func() { _, _, err := ReadDB(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), journal+": is a ") || !strings.Contains(err.Error(), ", not a regular file: not read") {
				t.Errorf("journal %s: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("journal %s: still reading after 5 s", name)
		}
		os.Remove(journal)
	}
	if _, _, err := ReadDB(path); err != nil {
		t.Errorf("without the journal: %v", err)
	}
}

// A message timestamp no message has (0, the Unix epoch: a clock never
// set) is warned and the message timed as the one before it.
func TestStateDBEpochTimestamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	execAll(t, path, `CREATE TABLE sessions (id TEXT, source TEXT, model TEXT, started_at REAL)`,
		`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`,
		`INSERT INTO sessions VALUES ('s', 'cli', 'gpt-4o', 1700000000)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hi', 1700000001)`,
		`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'assistant', 'ok', 0)`)
	ss, w, err := ReadDB(path)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	ev := ss[0].Events
	require.Len(t, ev, 2)
	if !ev[1].Time.Equal(ev[0].Time) {
		t.Errorf("the epoch message timed %v, want the previous message's %v", ev[1].Time, ev[0].Time)
	}
	var got int
	for _, x := range w.List() {
		if x.Reason == WarnBadTime {
			got = x.Count
		}
	}
	if got != 1 {
		t.Errorf("bad-time warnings %d, want 1 (all: %v)", got, w.List())
	}
}

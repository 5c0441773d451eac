package hermes

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
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

package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/traces"
)

// DBLimits bound the work a state.db can make the reader do. A database
// is input like any other: a view in place of a table can run a query
// forever (a recursive CTE) and fill the temporary directory.
type DBLimits struct {
	// Timeout interrupts the reading queries (sqlite3_interrupt) once
	// passed.
	Timeout time.Duration
	// HeapBytes caps SQLite's memory (PRAGMA hard_heap_limit); temporary
	// tables and sorts are kept in memory (temp_store=MEMORY), so this
	// bounds them too and nothing is written to the temp directory.
	HeapBytes int64
}

// DefaultDBLimits are generous for a real state.db (hundreds of MB read in
// seconds) and still end a hostile one.
var DefaultDBLimits = DBLimits{Timeout: 2 * time.Minute, HeapBytes: 1 << 30}

// Warning reasons of ReadDB.
const (
	WarnWALSkipped     = "read state.db without its write-ahead log (recent writes not seen): reading it would create state.db-shm beside the input, or the directory is read-only"
	WarnHotJournal     = "read state.db as of its last commit: its rollback journal is hot (a writer stopped mid-transaction), so it was rolled back in a private copy; the input is untouched"
	WarnMissingColumn  = "read sessions without its %s column (counted as 0 in every session)"
	WarnNoUsageColumns = "read sessions without usage columns (an older hermes schema): its sessions bill nothing"
	WarnOrphanMessage  = "skipped message whose session_id names no session"
)

// ReadDB reads every session of a hermes-agent state.db, opened read-only
// so a running hermes is never disturbed, within DefaultDBLimits. Only the
// columns the import needs are read; optional ones missing from an older
// schema read as NULL. Messages are read in id order (insertion order),
// which keeps a compaction's archived rows before the rows that replaced
// them. Warnings name a message as "state.db#messages:ID".
func ReadDB(path string) ([]*traces.Session, *traces.Warnings, error) {
	return ReadDBWithin(context.Background(), path, DefaultDBLimits)
}

// ReadDBWithin is ReadDB within lim (and ctx).
//
// The database is read as SQLite reads it, and nothing is created beside
// the input. A database in rollback-journal mode (the default) is opened
// mode=ro, so SQLite takes a shared lock and honours a journal: while a
// writer holds the lock past a short wait the read is refused ("locked by
// a writer"), and a hot journal (a writer stopped mid-transaction, its
// uncommitted pages in the file) is rolled back in a private copy, with a
// warning, since a read-only connection cannot roll it back in place.
// (Opened immutable=1, which ignores journals, the uncommitted pages were
// read as data.) A WAL database with no log to read is opened immutable=1
// (SQLite then takes no locks and writes no -shm); one whose -wal holds
// writes is opened mode=ro only while its -shm already exists (hermes is
// running), else, or when mode=ro fails (a read-only directory), it is
// read immutable without the log, with a warning.
func ReadDBWithin(ctx context.Context, path string, lim DBLimits) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	db, done, err := openDB(ctx, path, lim, w)
	var out []*traces.Session
	if err == nil {
		out, err = readDB(ctx, db, path, w)
		db.Close()
		done()
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: read interrupted (time limit %v): %w", path, lim.Timeout, ctx.Err())
	}
	return out, w, err
}

// busyWait is how long a read waits for a writer's lock before refusing:
// hermes commits in milliseconds.
const busyWait = 2 * time.Second

// openDB opens path read-only as ReadDBWithin describes, with the limits
// set, and checks that the tables read are tables. done removes what the
// open made (a rolled-back copy); call it after closing the database.
func openDB(ctx context.Context, path string, lim DBLimits, w *traces.Warnings) (db *sql.DB, done func(), err error) {
	done = func() {}
	pragmas := "&_pragma=query_only(1)&_pragma=temp_store(2)" + fmt.Sprintf("&_pragma=busy_timeout(%d)", busyWait.Milliseconds())
	if lim.HeapBytes > 0 {
		pragmas += fmt.Sprintf("&_pragma=hard_heap_limit(%d)", lim.HeapBytes)
	}
	if err := regularFiles(path); err != nil {
		return nil, done, err
	}
	open := func(path, mode string) (*sql.DB, error) {
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+mode+pragmas)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		if err := checkTables(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	if !walMode(path) {
		db, err := open(path, "mode=ro")
		switch code := sqliteCode(err); {
		case code == sqlite3.SQLITE_READONLY_ROLLBACK:
			return rolledBack(path, w, open)
		case code&0xff == sqlite3.SQLITE_BUSY:
			return nil, done, fmt.Errorf("%s: locked by a writer for over %v (%w): read it when hermes is idle", path, busyWait, err)
		case err != nil:
			return nil, done, fmt.Errorf("%s: %w", path, err)
		}
		return db, done, nil
	}
	walBytes := int64(0)
	if fi, err := os.Stat(path + "-wal"); err == nil {
		walBytes = fi.Size()
	}
	_, shmErr := os.Stat(path + "-shm")
	immutable := walBytes == 0 || shmErr != nil
	if walBytes > 0 && immutable {
		w.Add(path, 0, WarnWALSkipped)
	}
	if !immutable {
		db, err = open(path, "mode=ro")
		if err == nil || errors.Is(err, errView) {
			return db, done, wrapPath(path, err)
		}
		w.Add(path, 0, WarnWALSkipped)
	}
	db, err = open(path, "immutable=1")
	return db, done, wrapPath(path, err)
}

func wrapPath(path string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// regularFiles refuses a database whose file, or a journal, log or
// shared-memory file beside it, is there and not a regular file: SQLite
// opening a FIFO planted as state.db-journal waited for a writer forever,
// and the hot-journal copy of a link to /dev/zero filled the disk.
func regularFiles(path string) error {
	for _, side := range []string{"", "-journal", "-wal", "-shm"} {
		fi, err := os.Stat(path + side)
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s%s: %w", path, side, &atomicfile.NotRegularError{Mode: fi.Mode(), Read: true})
		}
	}
	return nil
}

// walMode reports whether path's header says WAL (file format versions 2,
// bytes 18 and 19); a file too short to say is not.
func walMode(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	n, _ := io.ReadFull(f, h[:])
	return n == len(h) && h[18] == 2 && h[19] == 2
}

// sqliteCode is err's SQLite result code (extended), 0 when it has none.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// rolledBack copies path and its hot journal into a private directory and
// opens the copy read-write, so SQLite rolls the journal back there as it
// would in place; done removes the copy.
func rolledBack(path string, w *traces.Warnings, open func(path, mode string) (*sql.DB, error)) (*sql.DB, func(), error) {
	tmp, err := os.MkdirTemp("", "ctxsim-state-*")
	if err != nil {
		return nil, func() {}, fmt.Errorf("%s: a hot rollback journal to roll back in a copy: %w", path, err)
	}
	done := func() { os.RemoveAll(tmp) }
	cp := filepath.Join(tmp, "state.db")
	for _, side := range []string{"", "-journal"} {
		if err := copyFile(cp+side, path+side); err != nil {
			done()
			return nil, func() {}, fmt.Errorf("%s: a hot rollback journal to roll back in a copy: %w", path, err)
		}
	}
	db, err := open(cp, "mode=rw")
	if err != nil {
		done()
		return nil, func() {}, fmt.Errorf("%s (rolled back in a copy): %w", path, err)
	}
	w.Add(path, 0, WarnHotJournal)
	return db, done, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

var errView = errors.New("is a view, not a table (refused: a view can run an unbounded query)")

// checkTables refuses a database whose sessions, messages or
// system_prompts is anything but a table.
func checkTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT name, type FROM sqlite_master WHERE name IN ('sessions', 'messages', 'system_prompts')")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return err
		}
		if typ != "table" {
			return fmt.Errorf("%s %w", name, errView)
		}
	}
	return rows.Err()
}

func readDB(ctx context.Context, db *sql.DB, path string, w *traces.Warnings) ([]*traces.Session, error) {
	scols, err := columns(ctx, db, "sessions")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mcols, err := columns(ctx, db, "messages")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !scols["id"] || !mcols["session_id"] || !mcols["role"] {
		why := "no sessions.id / messages.session_id, role"
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			why = "an empty file, which SQLite reads as a database without tables"
		}
		return nil, fmt.Errorf("%s: not a hermes state.db (%s)", path, why)
	}
	prompts, _ := columns(ctx, db, "system_prompts")
	hasUsage := warnMissingUsage(path, scols, w)

	sessions, err := readSessions(ctx, db, scols, prompts, path, w)
	if err != nil {
		return nil, fmt.Errorf("%s: sessions: %w", path, err)
	}
	msgs, err := readMessages(ctx, db, mcols)
	if err != nil {
		return nil, fmt.Errorf("%s: messages: %w", path, err)
	}
	file := path + "#messages"
	out := make([]*traces.Session, 0, len(sessions))
	for i := range sessions {
		sr := &sessions[i]
		sr.noTotals = !hasUsage
		rows := msgs[sr.ID]
		delete(msgs, sr.ID)
		out = append(out, build(sr, rows, file, func(i int) int { return int(rows[i].ID.int()) }, w))
	}
	orphans := make([]string, 0, len(msgs))
	for sid := range msgs {
		orphans = append(orphans, sid)
	}
	slices.Sort(orphans)
	for _, sid := range orphans {
		for _, m := range msgs[sid] {
			w.Add(file, int(m.ID.int()), WarnOrphanMessage)
		}
	}
	link(out)
	return out, nil
}

// usageCols are the sessions columns holding what a session was billed.
var usageCols = []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"}

// warnMissingUsage warns about each usage column the sessions table
// lacks when it has some (a missing input_tokens alone read as 0 in every
// session: a 100 % cache hit). A table with none (an older schema) has no
// totals: its sessions carry no recorded usage, as no other column says
// what they cost. It reports whether the table has any.
func warnMissingUsage(path string, have map[string]bool, w *traces.Warnings) bool {
	var missing []string
	for _, c := range usageCols {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == len(usageCols) {
		return false
	}
	for _, c := range missing {
		w.AddPlace(path+"#sessions", fmt.Sprintf(WarnMissingColumn, c))
	}
	return true
}

// columns is the set of a table's column names; empty when the table does
// not exist.
func columns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

// sel is a select list of want, with NULL for the columns have lacks.
func sel(prefix string, want []string, have map[string]bool) string {
	parts := make([]string, len(want))
	for i, c := range want {
		if have[c] {
			parts[i] = prefix + c
		} else {
			parts[i] = "NULL"
		}
	}
	return strings.Join(parts, ", ")
}

var sessionCols = []string{"id", "source", "model", "system_prompt", "parent_session_id", "started_at", "end_reason",
	"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "api_call_count",
	"estimated_cost_usd", "actual_cost_usd"}

// readSessions reads the sessions rows. Numbers are scanned as flexNum,
// so text in a numeric column is counted as 0 with a warning (checkTotals)
// rather than refusing the database; a row without an id is skipped with
// a warning.
func readSessions(ctx context.Context, db *sql.DB, have, prompts map[string]bool, path string, w *traces.Warnings) ([]sessionRow, error) {
	q := "SELECT " + sel("s.", sessionCols, have)
	if have["system_prompt_hash"] && prompts["hash"] && prompts["prompt"] {
		q += ", sp.prompt FROM sessions s LEFT JOIN system_prompts sp ON sp.hash = s.system_prompt_hash"
	} else {
		q += ", NULL FROM sessions s"
	}
	q += " ORDER BY " + orderBy(have, "s.started_at") + "s.id"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var (
			id, source, model, sysPrompt, parent, endReason, prompt sql.NullString
			sr                                                      sessionRow
		)
		if err := rows.Scan(&id, &source, &model, &sysPrompt, &parent, &sr.StartedAt, &endReason,
			&sr.InputTokens, &sr.OutputTokens, &sr.CacheReadTokens, &sr.CacheWriteTokens, &sr.ReasoningTokens,
			&sr.APICallCount, &sr.EstimatedCost, &sr.ActualCost, &prompt); err != nil {
			return nil, err
		}
		if strings.TrimSpace(id.String) == "" {
			w.AddPlace(path+"#sessions", WarnNoSession)
			continue
		}
		sr.ID, sr.Source, sr.Model, sr.SystemPrompt = id.String, source.String, model.String, sysPrompt.String
		sr.ParentSessionID, sr.EndReason = parent.String, endReason.String
		if prompt.Valid && prompt.String != "" {
			sr.SystemPrompt = prompt.String
		}
		out = append(out, sr)
	}
	return out, rows.Err()
}

func orderBy(have map[string]bool, col string) string {
	if have[col[strings.IndexByte(col, '.')+1:]] {
		return col + ", "
	}
	return ""
}

var messageCols = []string{"id", "session_id", "role", "content", "tool_call_id", "tool_calls", "timestamp",
	"token_count", "finish_reason", "reasoning", "_compressed_summary", "active", "compacted"}

// readMessages reads the messages rows by session id, scanned as
// readSessions scans (a row whose session_id is NULL belongs to no
// session: it is left for readDB to warn about as an orphan).
func readMessages(ctx context.Context, db *sql.DB, have map[string]bool) (map[string][]messageRow, error) {
	q := "SELECT " + sel("", messageCols, have) + " FROM messages"
	if have["id"] {
		q += " ORDER BY session_id, id"
	} else {
		q += " ORDER BY session_id, rowid"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	msgs := map[string][]messageRow{}
	for rows.Next() {
		var (
			sid, role, content, toolCallID, toolCalls, fin, reasn sql.NullString
			active                                                flexNum
			m                                                     messageRow
		)
		if err := rows.Scan(&m.ID, &sid, &role, &content, &toolCallID, &toolCalls, &m.Timestamp, &m.TokenCount, &fin, &reasn,
			&m.Summary, &active, &m.Compacted); err != nil {
			return nil, err
		}
		m.Role, m.ToolCallID, m.FinishReason, m.Reasoning = role.String, toolCallID.String, fin.String, reasn.String
		if active.Valid {
			a := flexBool(active.V != 0 && !math.IsNaN(active.V))
			m.Active = &a
		}
		if content.Valid {
			m.Content = dbContent(content.String)
		}
		if toolCalls.Valid && toolCalls.String != "" {
			m.ToolCalls = json.RawMessage(toolCalls.String)
			if !json.Valid(m.ToolCalls) {
				m.ToolCalls, _ = json.Marshal(toolCalls.String)
			}
		}
		key := sid.String
		if !sid.Valid {
			key = "\x00null" // no session id is this: only an orphan
		}
		msgs[key] = append(msgs[key], m)
	}
	return msgs, rows.Err()
}

// dbContent is the JSON form of a content column: hermes stores text as
// is, and structured content (parts) as its JSON array.
func dbContent(s string) json.RawMessage {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[{") && json.Valid([]byte(t)) {
		var parts []map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &parts) == nil && allTyped(parts) {
			return json.RawMessage(t)
		}
	}
	b, _ := json.Marshal(s)
	return b
}

func allTyped(parts []map[string]json.RawMessage) bool {
	for _, p := range parts {
		if _, ok := p["type"]; !ok {
			return false
		}
	}
	return len(parts) > 0
}

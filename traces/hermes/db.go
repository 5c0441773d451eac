package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"

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
	WarnWALSkipped = "read state.db without its write-ahead log (recent writes not seen): reading it would create state.db-shm beside the input, or the directory is read-only"
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
// Nothing is created beside the input: a database with no write-ahead log
// to read is opened immutable=1 (SQLite then takes no locks and writes no
// -shm); one whose -wal holds writes is opened mode=ro only while its -shm
// already exists (hermes is running), else, or when mode=ro fails (a
// read-only directory), it is read immutable without the log, with a
// warning.
func ReadDBWithin(ctx context.Context, path string, lim DBLimits) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	db, err := openDB(ctx, path, lim, w)
	var out []*traces.Session
	if err == nil {
		out, err = readDB(ctx, db, path, w)
		db.Close()
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: read interrupted (time limit %v): %w", path, lim.Timeout, ctx.Err())
	}
	return out, w, err
}

// openDB opens path read-only as ReadDBWithin describes, with the limits
// set, and checks that the tables read are tables.
func openDB(ctx context.Context, path string, lim DBLimits, w *traces.Warnings) (*sql.DB, error) {
	walBytes := int64(0)
	if fi, err := os.Stat(path + "-wal"); err == nil {
		walBytes = fi.Size()
	}
	_, shmErr := os.Stat(path + "-shm")
	immutable := walBytes == 0 || shmErr != nil
	if walBytes > 0 && immutable {
		w.Add(path, 0, WarnWALSkipped)
	}
	pragmas := "&_pragma=query_only(1)&_pragma=temp_store(2)"
	if lim.HeapBytes > 0 {
		pragmas += fmt.Sprintf("&_pragma=hard_heap_limit(%d)", lim.HeapBytes)
	}
	open := func(mode string) (*sql.DB, error) {
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+mode+pragmas)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		db.SetMaxOpenConns(1)
		if err := checkTables(ctx, db); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return db, nil
	}
	if immutable {
		return open("immutable=1")
	}
	db, err := open("mode=ro")
	if err != nil && !errors.Is(err, errView) {
		w.Add(path, 0, WarnWALSkipped)
		return open("immutable=1")
	}
	return db, err
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
		return nil, fmt.Errorf("%s: not a hermes state.db (no sessions.id / messages.session_id, role)", path)
	}
	prompts, _ := columns(ctx, db, "system_prompts")

	sessions, err := readSessions(ctx, db, scols, prompts)
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
		rows := msgs[sr.ID]
		out = append(out, build(sr, rows, file, func(i int) int { return int(rows[i].ID.V) }, w))
	}
	link(out)
	return out, nil
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

func readSessions(ctx context.Context, db *sql.DB, have, prompts map[string]bool) ([]sessionRow, error) {
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
			id                                                                   string
			source, model, sysPrompt, parent, endReason, prompt                  sql.NullString
			started, in, outTok, read, write, reasoning, calls, estCost, actCost sql.NullFloat64
		)
		if err := rows.Scan(&id, &source, &model, &sysPrompt, &parent, &started, &endReason,
			&in, &outTok, &read, &write, &reasoning, &calls, &estCost, &actCost, &prompt); err != nil {
			return nil, err
		}
		sr := sessionRow{ID: id, Source: source.String, Model: model.String, SystemPrompt: sysPrompt.String,
			ParentSessionID: parent.String, EndReason: endReason.String,
			StartedAt: num(started), InputTokens: num(in), OutputTokens: num(outTok), CacheReadTokens: num(read),
			CacheWriteTokens: num(write), ReasoningTokens: num(reasoning), APICallCount: num(calls),
			EstimatedCost: num(estCost), ActualCost: num(actCost)}
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

func num(f sql.NullFloat64) flexNum { return flexNum{V: f.Float64, Valid: f.Valid} }

var messageCols = []string{"id", "session_id", "role", "content", "tool_call_id", "tool_calls", "timestamp",
	"token_count", "finish_reason", "reasoning", "_compressed_summary", "active", "compacted"}

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
			id                                               sql.NullInt64
			sid                                              string
			role, content, toolCallID, toolCalls, fin, reasn sql.NullString
			ts, tokens, summary, active, compacted           sql.NullFloat64
		)
		if err := rows.Scan(&id, &sid, &role, &content, &toolCallID, &toolCalls, &ts, &tokens, &fin, &reasn,
			&summary, &active, &compacted); err != nil {
			return nil, err
		}
		m := messageRow{ID: flexNum{V: float64(id.Int64), Valid: id.Valid}, Role: role.String, ToolCallID: toolCallID.String, Timestamp: num(ts), TokenCount: num(tokens),
			FinishReason: fin.String, Reasoning: reasn.String, Summary: flexBool(summary.Float64 != 0),
			Compacted: flexBool(compacted.Float64 != 0)}
		if active.Valid {
			a := flexBool(active.Float64 != 0)
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
		msgs[sid] = append(msgs[sid], m)
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

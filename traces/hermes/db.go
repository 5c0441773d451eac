package hermes

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"

	"github.com/ctxsim/ctxsim/traces"
)

// ReadDB reads every session of a hermes-agent state.db, opened read-only
// (mode=ro, query_only) so a running hermes is never disturbed. Only the
// columns the import needs are read; optional ones missing from an older
// schema read as NULL. Messages are read in id order (insertion order),
// which keeps a compaction's archived rows before the rows that replaced
// them. Warnings name a message as "state.db#messages:ID".
func ReadDB(path string) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_pragma=query_only(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, w, fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	scols, err := columns(db, "sessions")
	if err != nil {
		return nil, w, fmt.Errorf("%s: %w", path, err)
	}
	mcols, err := columns(db, "messages")
	if err != nil {
		return nil, w, fmt.Errorf("%s: %w", path, err)
	}
	if !scols["id"] || !mcols["session_id"] || !mcols["role"] {
		return nil, w, fmt.Errorf("%s: not a hermes state.db (no sessions.id / messages.session_id, role)", path)
	}
	prompts, _ := columns(db, "system_prompts")

	sessions, err := readSessions(db, scols, prompts)
	if err != nil {
		return nil, w, fmt.Errorf("%s: sessions: %w", path, err)
	}
	msgs, err := readMessages(db, mcols)
	if err != nil {
		return nil, w, fmt.Errorf("%s: messages: %w", path, err)
	}
	file := path + "#messages"
	out := make([]*traces.Session, 0, len(sessions))
	for i := range sessions {
		sr := &sessions[i]
		rows := msgs[sr.ID]
		out = append(out, build(sr, rows, file, func(i int) int { return int(rows[i].ID.V) }, w))
	}
	link(out)
	return out, w, nil
}

// columns is the set of a table's column names; empty when the table does
// not exist.
func columns(db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.Query("SELECT name FROM pragma_table_info(?)", table)
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

func readSessions(db *sql.DB, have, prompts map[string]bool) ([]sessionRow, error) {
	q := "SELECT " + sel("s.", sessionCols, have)
	if have["system_prompt_hash"] && prompts["hash"] && prompts["prompt"] {
		q += ", sp.prompt FROM sessions s LEFT JOIN system_prompts sp ON sp.hash = s.system_prompt_hash"
	} else {
		q += ", NULL FROM sessions s"
	}
	q += " ORDER BY " + orderBy(have, "s.started_at") + "s.id"
	rows, err := db.Query(q)
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

func readMessages(db *sql.DB, have map[string]bool) (map[string][]messageRow, error) {
	q := "SELECT " + sel("", messageCols, have) + " FROM messages"
	if have["id"] {
		q += " ORDER BY session_id, id"
	} else {
		q += " ORDER BY session_id, rowid"
	}
	rows, err := db.Query(q)
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

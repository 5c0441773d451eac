package hermes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// IsDBName reports whether a file's name says it is a SQLite database
// (.db, .sqlite, .sqlite3): it is read as one whatever it holds, as SQLite
// would read it (an empty file is a database without tables).
func IsDBName(name string) bool {
	for _, ext := range []string{".db", ".sqlite", ".sqlite3"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Import reads a hermes-agent state.db (a file starting with the SQLite
// header, or named as a database: IsDBName) or a `hermes sessions export` file (JSON or JSONL).
func Import(path string) ([]*traces.Session, *traces.Warnings, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &traces.Warnings{}, err
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if n == 16 && string(head) == "SQLite format 3\x00" || IsDBName(path) {
		return ReadDB(path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, &traces.Warnings{}, err
	}
	w := &traces.Warnings{}
	ss, err := ReadExport(f, path, w)
	return ss, w, err
}

// ReadExport reads `hermes sessions export` output: JSONL with one session
// object per line (export_all), or one JSON document holding a session
// object (export_session, export_session_lineage) or an array of them.
// Each object is the session row plus "messages"; a lineage export's
// "segments" are imported as the sessions they were.
func ReadExport(r io.Reader, name string, w *traces.Warnings) ([]*traces.Session, error) {
	rest, lines, err := jsonl.Sniff(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []*traces.Session
	if lines {
		sc := jsonl.NewScanner(rest, name, w)
		for sc.Scan() {
			var sr sessionRow
			if sc.Decode(&sr) {
				out = append(out, exportSession(&sr, name, sc.Line(), w)...)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		sc.FailUnread()
	} else {
		data, err := io.ReadAll(rest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			return nil, nil
		}
		var rows []sessionRow
		if data[0] == '[' {
			err = json.Unmarshal(data, &rows)
		} else {
			rows = make([]sessionRow, 1)
			err = json.Unmarshal(data, &rows[0])
		}
		if err != nil {
			return nil, jsonl.SyntaxError(name, data, err)
		}
		for i := range rows {
			out = append(out, exportSession(&rows[i], name, 1, w)...)
		}
	}
	link(out)
	return out, nil
}

func exportSession(sr *sessionRow, name string, line int, w *traces.Warnings) []*traces.Session {
	if len(sr.Segments) > 0 {
		var out []*traces.Session
		for _, raw := range sr.Segments {
			var seg sessionRow
			if err := json.Unmarshal(raw, &seg); err != nil {
				w.Add(name, line, jsonl.WarnInvalidJSON)
				continue
			}
			seg.Segments = nil
			out = append(out, exportSession(&seg, name, line, w)...)
		}
		return out
	}
	if strings.TrimSpace(sr.ID) == "" {
		w.Add(name, line, WarnNoSession)
		return nil
	}
	rows := make([]messageRow, 0, len(sr.Messages))
	for _, raw := range sr.Messages {
		var m messageRow
		if err := json.Unmarshal(raw, &m); err != nil {
			w.Add(name, line, WarnBadRow)
			continue
		}
		rows = append(rows, m)
	}
	return []*traces.Session{build(sr, rows, name, func(int) int { return line }, w)}
}

package hermes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/chatlog"
)

// Format is the Session.Format of imported sessions.
const Format = "hermes"

// Warning reasons.
const (
	WarnInactive  = "kept inactive message that is not marked compacted"
	WarnNoSession = "skipped session without id"
	WarnBadRow    = "skipped message row that is not an object"
	WarnNoRole    = "skipped message without role"
	WarnBadTime   = "kept message with a timestamp no message has (not a number of seconds from 2000 to 2099: the Unix epoch; timed as the previous one)"
)

// maxUnix is 9999-12-31T23:59:59Z, the last time the native format writes.
const maxUnix = 253402300799

// validTime reports whether n can date a message: a number of seconds
// that traces.PlausibleTime accepts (0, the Unix epoch, is a clock that
// was never set).
func validTime(n flexNum) bool {
	return n.Valid && n.V >= 0 && n.V <= maxUnix && traces.PlausibleTime(unixTime(n.V))
}

// Summary prefixes hermes' compressor writes (reference hermes.md §3.5),
// recognised when a row lacks the _compressed_summary flag (exports from
// builds before the column existed).
var summaryPrefixes = []string{
	"[CONTEXT COMPACTION",
	"[CONTEXT SUMMARY]:",
	"[PRIOR CONTEXT — for reference only",
}

// A sessionRow is the part of a sessions row (or export object) the
// importer uses.
type sessionRow struct {
	ID               string            `json:"id"`
	Source           string            `json:"source"`
	Model            string            `json:"model"`
	SystemPrompt     string            `json:"system_prompt"`
	ParentSessionID  string            `json:"parent_session_id"`
	StartedAt        flexNum           `json:"started_at"`
	EndReason        string            `json:"end_reason"`
	InputTokens      flexNum           `json:"input_tokens"`
	OutputTokens     flexNum           `json:"output_tokens"`
	CacheReadTokens  flexNum           `json:"cache_read_tokens"`
	CacheWriteTokens flexNum           `json:"cache_write_tokens"`
	ReasoningTokens  flexNum           `json:"reasoning_tokens"`
	APICallCount     flexNum           `json:"api_call_count"`
	EstimatedCost    flexNum           `json:"estimated_cost_usd"`
	ActualCost       flexNum           `json:"actual_cost_usd"`
	Messages         []json.RawMessage `json:"messages"`
	Segments         []json.RawMessage `json:"segments"`

	noTotals bool // a state.db with no usage columns: no totals note
}

// A messageRow is one row of the messages table, as the DB holds it or an
// export writes it.
type messageRow struct {
	ID           flexNum         `json:"id"`
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCallID   string          `json:"tool_call_id"`
	ToolCalls    json.RawMessage `json:"tool_calls"`
	Timestamp    flexNum         `json:"timestamp"`
	TokenCount   flexNum         `json:"token_count"`
	FinishReason string          `json:"finish_reason"`
	Reasoning    string          `json:"reasoning"`
	Summary      flexBool        `json:"_compressed_summary"`
	Active       *flexBool       `json:"active"`
	Compacted    flexBool        `json:"compacted"`
}

// flexNum reads a JSON number, a numeric string or null, and a SQLite
// value of any storage class: SQLite keeps what a row was given whatever
// the column's declared type, so an INTEGER column can hold text. A value
// that is not a number (text, a JSON object) is NaN and Valid, so that
// the check of its field counts it as 0 with a warning
// (traces.CheckCount) instead of reading it as absent; null and NULL are
// absent (!Valid).
type flexNum struct {
	V     float64
	Valid bool
}

func (n *flexNum) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = flexNum{}
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			s = ""
		}
		b = []byte(s)
	}
	n.V, n.Valid = parseNum(string(b)), true
	return nil
}

// Scan implements sql.Scanner.
func (n *flexNum) Scan(src any) error {
	*n = flexNum{Valid: src != nil}
	switch v := src.(type) {
	case nil:
	case int64:
		n.V = float64(v)
	case float64:
		n.V = v
	case []byte:
		n.V = parseNum(string(v))
	case string:
		n.V = parseNum(v)
	default:
		n.V = math.NaN()
	}
	return nil
}

// parseNum is s as a number, NaN when it is not one (or not finite).
func parseNum(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// int is the value as an integer; 0 when it is not a finite number in
// int64's range (the checks that warn about such values ran before).
func (n flexNum) int() int64 {
	if !n.Valid || math.IsNaN(n.V) || math.Abs(n.V) >= 1<<63 {
		return 0
	}
	return int64(n.V)
}

// flexBool reads true/false, 0/1 (SQLite has no booleans) or null.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	*f = flexBool(truthy(strings.TrimSpace(string(b))))
	return nil
}

// Scan implements sql.Scanner: a non-zero number, or the text "1" or
// "true", is true.
func (f *flexBool) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*f = v != 0
	case float64:
		*f = v != 0
	case []byte:
		*f = flexBool(truthy(string(v)))
	case string:
		*f = flexBool(truthy(v))
	default:
		*f = false
	}
	return nil
}

func truthy(s string) bool {
	switch s {
	case "true", "1", `"1"`, `"true"`:
		return true
	}
	return false
}

// unixTime converts hermes' REAL epoch seconds, rounded to the microsecond
// so float noise does not leak into the trace.
func unixTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(math.Round(frac*1e6))*1e3).UTC()
}

// build converts one session and its message rows, in row order. place
// names row i in warnings.
func build(sr *sessionRow, rows []messageRow, file string, place func(i int) int, w *traces.Warnings) *traces.Session {
	checkTotals(sr, file, w)
	s := &traces.Session{ID: sr.ID, Source: traces.Source(sr.Source), Model: sr.Model, Format: Format, Parent: sr.ParentSessionID}
	if sr.SystemPrompt != "" {
		s.Floor = []traces.Block{{Kind: traces.System, Text: sr.SystemPrompt}}
	}
	t := chatlog.NewTranscript(s, file, w)
	var last time.Time
	if validTime(sr.StartedAt) {
		last = unixTime(sr.StartedAt.V)
	}
	prevArchived := false
	compactionOpen := false // a Compaction was emitted and its summary not yet seen
	for i := range rows {
		r := &rows[i]
		line := place(i)
		if r.Role == "" {
			w.Add(file, line, WarnNoRole)
			continue
		}
		at := last
		if validTime(r.Timestamp) {
			at = unixTime(r.Timestamp.V)
		} else if r.Timestamp.Valid {
			w.Add(file, line, WarnBadTime)
		}
		active := r.Active == nil || bool(*r.Active)
		archived := !active && bool(r.Compacted)
		if !active && !archived {
			w.Add(file, line, WarnInactive)
		}
		if prevArchived && !archived {
			s.Events = append(s.Events, traces.Event{Time: t.Clamp(line, at), Kind: traces.Compaction, Meta: map[string]string{"mode": "in_place"}})
			compactionOpen = true
		}
		prevArchived = archived
		summary := bool(r.Summary) || isSummaryText(r.Content)
		if summary && !compactionOpen {
			meta := map[string]string{"mode": "in_place"}
			if len(s.Events) == 0 && s.Parent != "" {
				meta["mode"] = "rotate"
			}
			s.Events = append(s.Events, traces.Event{Time: t.Clamp(line, at), Kind: traces.Compaction, Meta: meta})
		}
		if summary {
			compactionOpen = false
		}
		m := chatlog.Message{Role: r.Role, Content: r.Content, ToolCalls: r.ToolCalls, ToolCallID: r.ToolCallID, ReasoningContent: r.Reasoning}
		idx := t.Add(line, at, &m)
		last = at
		if idx < 0 {
			continue
		}
		ev := &s.Events[idx]
		if summary {
			if ev.Kind != traces.User {
				ev.Meta = setMeta(ev.Meta, "role", r.Role)
				ev.Kind = traces.User
			}
			ev.Summary = true
		}
		if r.TokenCount.Valid {
			n, reason := traces.CheckCount(r.TokenCount.V)
			if reason != "" {
				w.Add(file, line, reason)
			}
			ev.Meta = setMeta(ev.Meta, "token_count", strconv.FormatInt(n, 10))
		}
		if r.FinishReason != "" && ev.Kind == traces.Assistant {
			ev.Meta = setMeta(ev.Meta, "finish_reason", r.FinishReason)
		}
	}
	t.Finish()
	if !sr.noTotals {
		s.Notes = append(s.Notes, totalsNote(sr))
	}
	if len(s.Floor) == 0 {
		s.Notes = append(s.Notes, "floor not recorded: no system prompt in the session row, and hermes does not store tool schemas")
	} else {
		s.Notes = append(s.Notes, "floor holds the recorded system prompt only: hermes does not store tool schemas")
	}
	if sr.EndReason == "compression" {
		s.Notes = append(s.Notes, "ended by compression: the conversation continues in a child session")
	}
	return s
}

func setMeta(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func isSummaryText(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	s = strings.TrimSpace(s)
	for _, p := range summaryPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// maxCalls bounds a session's api_call_count: a million calls is years of
// a busy agent; more is damage.
const maxCalls = 1_000_000

// checkTotals bounds the session row's usage counts in place, each with a
// warning naming the session: a total sums the session's calls, so its
// bound is traces.MaxCallTokens per call.
func checkTotals(sr *sessionRow, file string, w *traces.Warnings) {
	place := strings.TrimSuffix(file, "#messages") + "#sessions:" + sr.ID
	check := func(n *flexNum, limit int64) {
		if !n.Valid {
			return
		}
		v, reason := traces.CheckCountUpTo(n.V, limit)
		if reason != "" {
			w.AddPlace(place, reason)
		}
		n.V = float64(v)
	}
	check(&sr.APICallCount, maxCalls)
	limit := traces.MaxCallTokens * max(int64(sr.APICallCount.V), 1)
	for _, n := range []*flexNum{&sr.InputTokens, &sr.OutputTokens, &sr.CacheReadTokens, &sr.CacheWriteTokens, &sr.ReasoningTokens} {
		check(n, limit)
	}
}

func finite(n flexNum) bool { return n.Valid && !math.IsNaN(n.V) && !math.IsInf(n.V, 0) }

// TotalsPrefix starts the Session.Notes entry holding hermes' per-session
// usage totals.
const TotalsPrefix = "recorded totals (hermes keeps no per-call usage): "

// totalsNote records the session row's usage totals. hermes stores usage per
// session only, so no assistant event carries Usage: a per-call split would
// be invented. input is uncached input, as hermes stores it (§9).
func totalsNote(sr *sessionRow) string {
	cost := sr.ActualCost
	if !finite(cost) {
		cost = sr.EstimatedCost
	}
	if !finite(cost) || cost.V < 0 {
		cost.V = 0 // not a figure to repeat (text in a REAL column, or negative)
	}
	return fmt.Sprintf("%sinput=%d cache_read=%d cache_write=%d output=%d reasoning=%d api_calls=%d cost_usd=%.6f",
		TotalsPrefix, sr.InputTokens.int(), sr.CacheReadTokens.int(), sr.CacheWriteTokens.int(),
		sr.OutputTokens.int(), sr.ReasoningTokens.int(), sr.APICallCount.int(), cost.V)
}

// Totals parses the totals note of an imported session: the usage hermes
// recorded for the whole session (writes counted as 5m writes), and the
// number of API calls. ok is false when s has no such note.
func Totals(s *traces.Session) (u traces.Usage, calls int64, ok bool) {
	for _, n := range s.Notes {
		rest, found := strings.CutPrefix(n, TotalsPrefix)
		if !found {
			continue
		}
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			x, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "input":
				u.Input = x
			case "cache_read":
				u.CacheRead = x
			case "cache_write":
				u.CacheWrite5m = x
			case "output":
				u.Output = x
			case "api_calls":
				calls = x
			}
		}
		return u, calls, true
	}
	return u, 0, false
}

// link fills Children from Parent links among the imported sessions, sorted.
func link(ss []*traces.Session) {
	byID := map[string]*traces.Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	for _, s := range ss {
		if p, ok := byID[s.Parent]; ok && s.Parent != s.ID {
			p.Children = append(p.Children, s.ID)
		}
	}
	for _, s := range ss {
		sort.Strings(s.Children)
	}
}

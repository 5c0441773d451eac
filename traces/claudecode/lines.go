package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
)

// Warning reasons. They say what was done with the input, so that a count
// of them is a complete account of everything not imported as it was.
const (
	warnInvalidJSON   = "skipped invalid JSON"
	warnTruncated     = "skipped truncated last line"
	warnTooLong       = "skipped line longer than 64 MiB"
	warnInvalidUTF8   = "kept line with invalid UTF-8 (bytes replaced by U+FFFD)"
	warnUnknownType   = "skipped unknown record type"
	warnUnknownBlock  = "skipped unknown content block type"
	warnBackwards     = "kept timestamp going backwards (clamped to the previous event)"
	warnBadTime       = "kept line with a missing or bad timestamp (not RFC 3339, or before 2000 or after 2099: Go's zero time, the Unix epoch): took the previous event's time"
	warnNoUsage       = "kept assistant call without usage block (not billed)"
	warnOrphanResult  = "kept tool_result with no matching tool_use"
	warnSynthetic     = "skipped synthetic assistant message (not a model call)"
	warnNoMessage     = "skipped user or assistant line without message"
	warnDupSession    = "kept duplicate session id (renamed with a ~N suffix)"
	warnDupCallGlobal = "skipped call already counted from another file"
	warnAttachment    = "skipped attachment after the last message (never sent)"
	warnResumeCopy    = "kept call a resumed file copied from the session it resumes as history (billed there, not replayed)"
)

// syntheticModel is the model Claude Code writes on assistant messages it
// made itself (API errors, interrupted turns); they are not model calls.
const syntheticModel = "<synthetic>"

// lineReader yields the lines of r without a length limit on the reader's
// side: lines over traces.MaxLine are discarded (and reported) instead of
// stopping the file, since one oversize tool output must not lose a
// session.
type lineReader struct {
	br   *bufio.Reader
	buf  []byte
	line int
	// long is set when the last line returned was over the limit (and is
	// empty); eof when the last line had no final newline.
	long, eof bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line without its newline; ok is false at the end.
// The slice is valid until the next call.
func (lr *lineReader) next() (b []byte, ok bool, err error) {
	lr.buf = lr.buf[:0]
	lr.long, lr.eof = false, false
	for {
		frag, err := lr.br.ReadSlice('\n')
		if !lr.long {
			if len(lr.buf)+len(frag) > traces.MaxLine+1 {
				lr.long = true
				lr.buf = lr.buf[:0]
			} else if len(lr.buf) == 0 && err == nil {
				// The whole line is in the reader's buffer: no copy.
				lr.line++
				return frag[:len(frag)-1], true, nil
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		switch {
		case err == nil:
			lr.line++
			if lr.long {
				return nil, true, nil
			}
			return lr.buf[:len(lr.buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !lr.long {
				return nil, false, nil
			}
			lr.line++
			lr.eof = true
			return lr.buf, true, nil
		default:
			return nil, false, err
		}
	}
}

// rawUsage is Anthropic's usage block as Claude Code logs it. Counts are
// decoded leniently (traces.Count) and checked by traces.CheckAnthropic, the
// check the fast scan runs too.
type rawUsage struct {
	Input         traces.Count `json:"input_tokens"`
	CacheCreation traces.Count `json:"cache_creation_input_tokens"`
	CacheRead     traces.Count `json:"cache_read_input_tokens"`
	Output        traces.Count `json:"output_tokens"`
	Split         *struct {
		W5m traces.Count `json:"ephemeral_5m_input_tokens"`
		W1h traces.Count `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// usage checks u, warning about what it resolves.
func (u *rawUsage) usage(warn func(string)) traces.Usage {
	return traces.CheckAnthropic(u.raw(), warn)
}

func (u *rawUsage) raw() traces.RawAnthropic {
	r := traces.RawAnthropic{Input: float64(u.Input), CacheCreation: float64(u.CacheCreation),
		CacheRead: float64(u.CacheRead), Output: float64(u.Output)}
	if u.Split != nil {
		r.HasSplit, r.W5m, r.W1h = true, float64(u.Split.W5m), float64(u.Split.W1h)
	}
	return r
}

// mergeUsage folds another line's usage of one call into *have, keeping the
// most complete (traces.MoreComplete) and warning when the two disagree on
// the prompt side.
func mergeUsage(have *traces.Usage, u traces.Usage, warn func(string)) {
	if traces.Conflicting(*have, u) {
		warn(traces.WarnUsageConflict)
	}
	if traces.MoreComplete(*have, u) {
		*have = u
	}
}

// parseTime parses Claude Code's ISO-8601 timestamps: ok is false for
// none, for one that does not parse, and for one no call was made at
// (traces.PlausibleTime: Go's zero time, the Unix epoch).
func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !traces.PlausibleTime(t) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// callKey identifies one API response across the lines it is spread over.
// Lines without a message id or request id are never merged.
func callKey(msgID, reqID string) string {
	if msgID == "" || reqID == "" {
		return ""
	}
	return msgID + "\x00" + reqID
}

// knownSkip are record types that carry nothing the model saw.
var knownSkip = map[string]bool{
	"progress":              true,
	"file-history-snapshot": true,
	"queue-operation":       true,
	"summary":               true,
	"pr-link":               true,
	"custom-title":          true,
	"tag":                   true,
	"agent-name":            true,
	// Session metadata of Claude Code 2.1 (corpus openshrooly, jcode).
	"permission-mode": true,
	"last-prompt":     true,
	"mode":            true,
	"ai-title":        true,
}

var (
	keyUsage     = []byte(`"usage"`)
	keyAssistant = []byte(`"type":"assistant"`)
)

// decodeLine unmarshals one log line into v, repairing invalid UTF-8 and
// telling a cut-off last line (eof) from invalid JSON, each a warning at
// name:line. It reports whether v was decoded.
func decodeLine(b []byte, eof bool, v any, w *traces.Warnings, name string, line int) bool {
	if !utf8.Valid(b) {
		w.Add(name, line, warnInvalidUTF8)
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if err := json.Unmarshal(b, v); err != nil {
		if eof {
			w.Add(name, line, warnTruncated)
		} else {
			w.Add(name, line, warnInvalidJSON)
		}
		return false
	}
	return true
}

// identity is a session's id from a line's sessionId and agentId: a
// subagent's file is <session>.agent-<agent>, a child of the session, and
// an agent-acompact-* agent is a compaction's summarizer.
func identity(sessionID, agentID string) (id, parent string, compaction bool) {
	if agentID == "" {
		return sessionID, "", false
	}
	return sessionID + ".agent-" + agentID, sessionID, strings.HasPrefix(agentID, "acompact")
}

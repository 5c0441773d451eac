package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// MaxLine is the longest line a reader accepts (64 MiB). Longer lines are a
// SyntaxError, not a crash or a silent truncation.
const MaxLine = 64 << 20

// FormatName is the value of the header's "format" field.
const FormatName = "ctxsim-trace"

type header struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Session *Session `json:"session"`
}

// A Reader reads a native trace, modeled on bufio.Scanner: the header is read
// by NewReader's first Scan, then one event per Scan.
//
//	r := traces.NewReader(f, "a.jsonl")
//	for r.Scan() { ev := r.Event() }
//	if err := r.Err(); err != nil { ... }
//
// The reader is strict: the first bad line stops it with a *SyntaxError
// naming file:line. A trace is data a program wrote, so a bad line means the
// file is damaged, and half a session replayed is a wrong answer.
type Reader struct {
	name    string
	sc      *bufio.Scanner
	line    int
	sess    *Session
	ev      Event
	err     error
	started bool
}

// NewReader returns a reader of r; name is used in error messages.
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(DecodeText(r))
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &Reader{name: name, sc: sc}
}

func (r *Reader) fail(msg string, args ...any) bool {
	r.err = &SyntaxError{File: r.name, Line: r.line, Msg: fmt.Sprintf(msg, args...)}
	return false
}

func (r *Reader) next() ([]byte, bool) {
	for r.sc.Scan() {
		r.line++
		b := r.sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		return b, true
	}
	if err := r.sc.Err(); err != nil {
		r.line++
		if errors.Is(err, bufio.ErrTooLong) {
			r.fail("line longer than %d bytes", MaxLine)
		} else {
			r.err = fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return nil, false
}

func strictUnmarshal(b []byte, v any) error {
	if !utf8.Valid(b) {
		return errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func (r *Reader) readHeader() bool {
	r.started = true
	b, ok := r.next()
	if !ok {
		if r.err == nil {
			r.line = 1
			return r.fail("empty file: want a %s header line", FormatName)
		}
		return false
	}
	var h header
	if err := strictUnmarshal(b, &h); err != nil {
		return r.fail("header: %v", err)
	}
	if h.Format != FormatName {
		return r.fail("header: format %q, want %q", h.Format, FormatName)
	}
	if h.Version != Version {
		return r.fail("header: version %d not supported (this build reads version %d)", h.Version, Version)
	}
	if h.Session == nil || h.Session.ID == "" {
		return r.fail("header: session.id is missing")
	}
	r.sess = h.Session
	return true
}

// Session is the header's session metadata (without events). It is valid
// after the first call to Scan, even when the trace has no events.
func (r *Reader) Session() *Session { return r.sess }

// Scan advances to the next event. It returns false at the end of the input
// or at the first error.
func (r *Reader) Scan() bool {
	if r.err != nil {
		return false
	}
	if !r.started && !r.readHeader() {
		return false
	}
	b, ok := r.next()
	if !ok {
		return false
	}
	r.ev = Event{}
	if err := strictUnmarshal(b, &r.ev); err != nil {
		return r.fail("event: %v", err)
	}
	if !r.ev.Kind.Valid() {
		return r.fail("event: unknown kind %q", r.ev.Kind)
	}
	if r.ev.Time.IsZero() {
		return r.fail("event: missing time")
	}
	if y := r.ev.Time.UTC().Year(); y < 1 || y > 9999 {
		// Writers keep times in UTC and RFC 3339, which has no year
		// outside 0000–9999 ("0000-01-01T00:00:00+01:00" is year −1 in
		// UTC): such a time could be read but never written back.
		return r.fail("event: time %s is outside the years 0001–9999", r.ev.Time.Format(time.RFC3339))
	}
	if u := r.ev.Usage; u != nil {
		for _, f := range []struct {
			name string
			n    int64
		}{{"input", u.Input}, {"cache_write_5m", u.CacheWrite5m}, {"cache_write_1h", u.CacheWrite1h}, {"cache_read", u.CacheRead}, {"output", u.Output}} {
			// Negative counts are Validate's to report; a count this
			// large would swamp or wrap every sum it reaches.
			if f.n > MaxCallTokens {
				return r.fail("event: usage %s %d is over 10^9 tokens for one call", f.name, f.n)
			}
		}
	}
	if r.ev.LatencyMS > MaxLatencyMS {
		return r.fail("event: latency_ms %d is over a day", r.ev.LatencyMS)
	}
	return true
}

// MaxLatencyMS bounds one call's or tool's latency: a day. Replays sum
// latencies into clocks; a larger one is damage.
const MaxLatencyMS = 24 * 60 * 60 * 1000

// Event is the event read by the last successful Scan.
func (r *Reader) Event() Event { return r.ev }

// Line is the line number of the last line read.
func (r *Reader) Line() int { return r.line }

// Err is the first error met, or nil at a clean end of input.
func (r *Reader) Err() error {
	if r.err == nil && !r.started {
		r.readHeader()
	}
	return r.err
}

// ReadSession reads a whole native trace.
func ReadSession(rd io.Reader, name string) (*Session, error) {
	r := NewReader(rd, name)
	var evs []Event
	for r.Scan() {
		evs = append(evs, r.Event())
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	s := r.Session()
	s.Events = evs
	return s, nil
}

// WriteSession writes s in the native format. Writing is canonical: what a
// Reader reads from the output writes back to the same bytes.
func WriteSession(w io.Writer, s *Session) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header{Format: FormatName, Version: Version, Session: s}); err != nil {
		return fmt.Errorf("traces: write header of %s: %w", s.ID, err)
	}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Time.Location() != nil {
			e2 := *e
			e2.Time = e.Time.UTC()
			e = &e2
		}
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("traces: write event %d of %s: %w", i, s.ID, err)
		}
	}
	return bw.Flush()
}

package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
)

// Warning reasons, shared by the importers so the same problem reads the
// same in every format.
const (
	WarnTooLong     = "skipped line longer than 64 MiB"
	WarnTruncated   = "skipped truncated last line"
	WarnInvalidJSON = "skipped line with invalid JSON"
	WarnInvalidUTF8 = "kept line with invalid UTF-8 (bad bytes replaced)"
)

// A Scanner reads one line at a time, like bufio.Scanner, but skips what it
// cannot use with a counted warning instead of stopping: lines longer than
// traces.MaxLine are skipped, invalid UTF-8 is replaced by U+FFFD. Blank
// lines are skipped silently.
type Scanner struct {
	r        *bufio.Reader
	file     string
	w        *traces.Warnings
	line     int
	buf      []byte
	last     bool // the current line had no trailing newline
	err      error
	maxLine  int
	finished bool
	// lines and decoded count the non-blank lines and those Decode read,
	// for FailUnread.
	lines, decoded int
}

// NewScanner returns a scanner of r; file names it in warnings and errors,
// and w receives the warnings.
func NewScanner(r io.Reader, file string, w *traces.Warnings) *Scanner {
	return &Scanner{r: bufio.NewReaderSize(traces.DecodeText(r), 64<<10), file: file, w: w, maxLine: traces.MaxLine}
}

// Scan advances to the next non-blank line. It returns false at the end of
// the input or on an I/O error (see Err).
func (s *Scanner) Scan() bool {
	for !s.finished {
		s.buf = s.buf[:0]
		s.last = false
		tooLong := false
		for {
			chunk, err := s.r.ReadSlice('\n')
			if !tooLong {
				if len(s.buf)+len(chunk) > s.maxLine+1 {
					tooLong = true
					s.buf = s.buf[:0]
				} else {
					s.buf = append(s.buf, chunk...)
				}
			}
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			s.finished = true
			if err != io.EOF {
				s.err = fmt.Errorf("%s: %w", s.file, err)
				return false
			}
			s.last = true
			break
		}
		if len(s.buf) == 0 && !tooLong && s.finished {
			return false
		}
		s.line++
		s.lines++
		if tooLong {
			s.w.Add(s.file, s.line, WarnTooLong)
			continue
		}
		s.buf = bytes.TrimRight(s.buf, "\r\n")
		if len(bytes.TrimSpace(s.buf)) == 0 {
			s.lines--
			continue
		}
		if !utf8.Valid(s.buf) {
			s.w.Add(s.file, s.line, WarnInvalidUTF8)
			s.buf = bytes.ToValidUTF8(s.buf, []byte("\uFFFD"))
		}
		return true
	}
	return false
}

// Bytes is the current line without its line ending. It is valid until the
// next call to Scan.
func (s *Scanner) Bytes() []byte { return s.buf }

// Line is the 1-based number of the current line.
func (s *Scanner) Line() int { return s.line }

// File is the name given to NewScanner.
func (s *Scanner) File() string { return s.file }

// Warn records a warning at the current line.
func (s *Scanner) Warn(reason string) { s.w.Add(s.file, s.line, reason) }

// WarnAt records reason at place (traces.TimePlace: the line and a value).
func (s *Scanner) WarnAt(place, reason string) { s.w.AddPlace(place, reason) }

// Decode unmarshals the current line into v. On failure it records a
// warning (a truncated last line is told apart from a bad line in the
// middle) and returns false.
func (s *Scanner) Decode(v any) bool {
	if err := json.Unmarshal(s.buf, v); err != nil {
		if s.last && isTruncation(err) {
			s.Warn(WarnTruncated)
		} else {
			s.Warn(WarnInvalidJSON)
		}
		return false
	}
	s.decoded++
	return true
}

// FailUnread records traces.WarnUnreadFile, a failure naming the file, when
// the input had lines and Decode read none of them: a file of junk is
// dropped whole, never read as a log with nothing in it.
func (s *Scanner) FailUnread() {
	if s.lines > 0 && s.decoded == 0 {
		s.w.Fail(s.file, traces.WarnUnreadFile)
	}
}

// isTruncation reports whether err says the input ended inside a value.
// encoding/json has no sentinel for it; the message is stable API in
// practice (it is what io.ErrUnexpectedEOF decoding reports).
func isTruncation(err error) bool {
	return err.Error() == "unexpected end of JSON input"
}

// Err is the first I/O error met, or nil. Bad lines are warnings, not
// errors.
func (s *Scanner) Err() error { return s.err }

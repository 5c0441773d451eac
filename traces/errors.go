package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/internal/safetext"
)

// A SyntaxError is bad input at a place in a file.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// LineAt is the 1-based line of data that byte offset off is on.
func LineAt(data []byte, off int64) int {
	return 1 + bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte("\n"))
}

// JSONError is err, from decoding the JSON document data, as file:line:
// reason, at the offset a *json.SyntaxError or *json.UnmarshalTypeError
// gives, or at the end of the file for one cut short (no line when the
// error gives none).
func JSONError(file string, data []byte, err error) *SyntaxError {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off, err = int64(len(data)), errors.New("unexpected end of the file (no JSON value, or a cut one)")
	}
	line := 0
	if off >= 0 {
		line = LineAt(data, off)
	}
	return &SyntaxError{File: file, Line: line, Msg: err.Error()}
}

// Warnings counts the input a reader skipped or repaired, by reason, keeping
// the first place each reason was seen. It is how importers avoid both
// panicking and dropping records silently.
type Warnings struct {
	counts map[string]int
	first  map[string]string
	order  []string
	// failed counts the occurrences of reasons added by Fail.
	failed int
}

// Fail records a warning that is also a failure: input the reader had to
// drop whole (a session that cannot be replayed). Commands go on with the
// rest and exit 1 when Failed is not 0.
func (w *Warnings) Fail(place, reason string) {
	w.AddPlace(place, reason)
	w.failed++
}

// WarnUnreadFile is the failure for a log file none of whose lines could
// be read (each skipped as invalid JSON, too long, truncated or not a log
// record; blank lines aside): the file is dropped whole, so the command
// exits 1, where an empty bill or no session read as a clean result.
const WarnUnreadFile = "skipped file: none of its lines is a log record (see the warnings about its lines)"

// Failed is how many failures were recorded (see Fail).
func (w *Warnings) Failed() int {
	if w == nil {
		return 0
	}
	return w.failed
}

// Add records one occurrence of reason at file:line.
func (w *Warnings) Add(file string, line int, reason string) {
	if w.counts[reason] > 0 {
		w.counts[reason]++ // the first place is kept: no need to format this one
		return
	}
	w.AddPlace(fmt.Sprintf("%s:%d", file, line), reason)
}

// AddPlace records one occurrence of reason at a place that is not a line
// (a database row, a session).
func (w *Warnings) AddPlace(place, reason string) {
	if w.counts == nil {
		w.counts = map[string]int{}
		w.first = map[string]string{}
	}
	if w.counts[reason] == 0 {
		w.order = append(w.order, reason)
		w.first[reason] = place
	}
	w.counts[reason]++
}

// Merge adds every warning of o.
func (w *Warnings) Merge(o *Warnings) {
	if o == nil {
		return
	}
	w.failed += o.failed
	for _, r := range o.order {
		if w.counts == nil {
			w.counts = map[string]int{}
			w.first = map[string]string{}
		}
		if w.counts[r] == 0 {
			w.order = append(w.order, r)
			w.first[r] = o.first[r]
		}
		w.counts[r] += o.counts[r]
	}
}

// AddList adds warnings in List's form (as a shard wrote them): each
// reason with its count, first seen at its place unless w has it already.
func (w *Warnings) AddList(list []Warning) {
	for _, x := range list {
		if x.Count < 1 {
			continue
		}
		w.AddPlace(x.First, x.Reason)
		w.counts[x.Reason] += x.Count - 1
	}
}

// Len is the number of distinct reasons.
func (w *Warnings) Len() int { return len(w.order) }

// Total is the number of occurrences of all reasons.
func (w *Warnings) Total() int {
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

// A Warning is one reason with its count and first place.
type Warning struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	First  string `json:"first"`
}

// List returns the warnings sorted by reason, so output never depends on the
// order files were read in.
func (w *Warnings) List() []Warning {
	out := make([]Warning, 0, len(w.order))
	for _, r := range w.order {
		out = append(out, Warning{Reason: r, Count: w.counts[r], First: w.first[r]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

// String renders the warnings one per line, reason first:
// "warning: skipped invalid JSON: 3 lines (first at f.jsonl:12)". Reasons say
// what was done ("skipped ...", "kept ...").
func (w *Warnings) String() string { return FormatWarnings(w.List()) }

// FormatWarnings renders list as Warnings.String does: a merge of sharded
// runs' warnings prints them as one run would. Reasons and places carry
// names from the input (a file name, a session id, a model): their
// control characters are escaped (safetext.Line), so that none can act on
// a terminal or forge a line.
func FormatWarnings(list []Warning) string {
	var b strings.Builder
	for _, x := range list {
		noun := "line"
		if x.Count != 1 {
			noun = "lines"
		}
		fmt.Fprintf(&b, "warning: %s: %d %s (first at %s)\n", safetext.Line(x.Reason), x.Count, noun, safetext.Line(x.First))
	}
	return b.String()
}

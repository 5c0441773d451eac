package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// Interval is the least time between two redraws.
const Interval = 200 * time.Millisecond

// A Meter is one progress line. Its methods are safe for concurrent use;
// a nil Meter does nothing.
type Meter struct {
	w   io.Writer
	now func() time.Time

	mu            sync.Mutex
	read, files   int // logs read, of files found
	replay, solve work
	drawn         time.Time // of the last redraw
	done          bool
	width         int // of the line last drawn, to clear it
}

// work is one kind of unit: how many are done of how many, and when the
// first was done and how many then, for its rate.
type work struct {
	done, total int
	t0          time.Time
	n0          int
	started     bool
}

// add counts n more units done at t.
func (w *work) add(n int, t time.Time) {
	w.done += n
	if !w.started {
		// The rate counts the units after the first report: those
		// before it took an unknown time.
		w.t0, w.n0, w.started = t, w.done, true
	}
}

// left is the time w's remaining units take at its rate since its first,
// and whether that is known.
func (w *work) left(t time.Time) (time.Duration, bool) {
	done := min(w.done, w.total)
	if done >= w.total {
		return 0, true
	}
	el, n := t.Sub(w.t0), w.done-w.n0
	if !w.started || n <= 0 || el <= 0 {
		return 0, false
	}
	return time.Duration(float64(el) * float64(w.total-done) / float64(n)), true
}

// New is a Meter drawing on w with clock now.
func New(w io.Writer, now func() time.Time) *Meter { return &Meter{w: w, now: now} }

// ForTerminal is New when on and w is a terminal, else nil (nothing is
// drawn): a command passes on false for JSON output.
func ForTerminal(w io.Writer, now func() time.Time, on bool) *Meter {
	if f, ok := w.(*os.File); on && ok && term.IsTerminal(int(f.Fd())) {
		return New(w, now)
	}
	return nil
}

// Read sets how many log files have been read, of how many found (the
// importers report it as they go; counts may come out of order).
func (m *Meter) Read(read, files int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read, m.files = max(m.read, read), max(m.files, files)
	if m.read == m.files {
		// Read: what the load prints next (its warnings) starts on a
		// clean line.
		m.clear()
		return
	}
	m.redraw()
}

// Plan adds session replays and session optima to do.
func (m *Meter) Plan(replays, solves int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replay.total += replays
	m.solve.total += solves
	m.redraw()
}

// Replayed counts n more session replays done.
func (m *Meter) Replayed(n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replay.add(n, m.now())
	m.redraw()
}

// Solved counts n more sessions' optima solved.
func (m *Meter) Solved(n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.solve.add(n, m.now())
	m.redraw()
}

// Finish clears the line; the Meter draws nothing after it.
func (m *Meter) Finish() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.clear()
	}
	m.done = true
}

// clear blanks the line drawn.
func (m *Meter) clear() {
	if m.width > 0 {
		fmt.Fprint(m.w, "\r"+strings.Repeat(" ", m.width)+"\r")
	}
	m.width = 0
}

// redraw draws the line when Interval has passed since the last one.
func (m *Meter) redraw() {
	if m.done {
		return
	}
	t := m.now()
	if !m.drawn.IsZero() && t.Sub(m.drawn) < Interval {
		return
	}
	m.drawn = t
	line := m.line(t)
	pad := ""
	n := utf8.RuneCountInString(line)
	if n < m.width {
		pad = strings.Repeat(" ", m.width-n) // over the longer line before
	}
	fmt.Fprint(m.w, "\r"+line+pad)
	m.width = n
}

// line is what the Meter shows at t.
func (m *Meter) line(t time.Time) string {
	var parts []string
	if m.files > 0 && m.read < m.files {
		parts = append(parts, fmt.Sprintf("read %s/%s logs", count(m.read), count(m.files)))
	}
	if m.replay.total > 0 {
		parts = append(parts, fmt.Sprintf("replayed %s/%s sessions", count(min(m.replay.done, m.replay.total)), count(m.replay.total)))
	}
	if m.solve.total > 0 {
		parts = append(parts, fmt.Sprintf("solved %s/%s", count(min(m.solve.done, m.solve.total)), count(m.solve.total)))
	}
	if left, ok := m.left(t); ok {
		parts = append(parts, "~"+left.Round(time.Second).String()+" left")
	}
	if len(parts) == 0 {
		return "loading…"
	}
	return strings.Join(parts, " · ")
}

// left estimates the time left: replays and solves run side by side, so
// it is the longer of the two at their rates since each began; unknown
// until one of them has a rate, or when all is done.
func (m *Meter) left(t time.Time) (time.Duration, bool) {
	r, rok := m.replay.left(t)
	s, sok := m.solve.left(t)
	switch {
	case m.replay.total == 0 && m.solve.total == 0:
		return 0, false
	case rok && sok:
		if r == 0 && s == 0 {
			return 0, false
		}
		return max(r, s), true
	case rok && r > 0:
		return r, true
	case sok && s > 0:
		return s, true
	}
	return 0, false
}

// count is n with thousands separated.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// clock is a fake clock a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// lastLine is the last line drawn on out (after the last \r).
func lastLine(out string) string {
	i := strings.LastIndexByte(out, '\r')
	return strings.TrimRight(out[i+1:], " ")
}

func TestMeter(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	m := New(&out, c.now)
	step := func(d time.Duration, f func(), want string) {
		t.Helper()
		c.advance(d)
		f()
		if got := lastLine(out.String()); got != want {
			t.Errorf("after %v: %q, want %q", d, got, want)
		}
	}
	step(0, func() { m.Read(1, 4) }, "read 1/4 logs")
	// Within Interval: no redraw.
	m.Read(3, 4)
	if n := strings.Count(out.String(), "\r"); n != 1 {
		t.Errorf("%d draws within %v, want 1", n, Interval)
	}
	// Out of order: the count never goes back.
	step(Interval, func() { m.Read(2, 4) }, "read 3/4 logs")
	// All read: the line is cleared for what the load prints next.
	step(time.Second, func() { m.Read(4, 4) }, "")
	if s := out.String(); !strings.HasSuffix(s, "\r"+strings.Repeat(" ", len("read 3/4 logs"))+"\r") {
		t.Errorf("the last log read does not clear the line: %q", s)
	}
	step(time.Second, func() { m.Plan(3000, 1000) }, "replayed 0/3,000 sessions · solved 0/1,000")
	// The first report starts a rate; no estimate yet.
	step(Interval, func() { m.Replayed(1000) }, "replayed 1,000/3,000 sessions · solved 0/1,000")
	// 1,000 replays in 10 s, 1,000 left; the solves have no rate yet.
	step(10*time.Second, func() { m.Replayed(1000) }, "replayed 2,000/3,000 sessions · solved 0/1,000 · ~10s left")
	step(5*time.Second, func() { m.Solved(100) }, "replayed 2,000/3,000 sessions · solved 100/1,000 · ~15s left")
	step(10*time.Second, func() { m.Replayed(1000) }, "replayed 3,000/3,000 sessions · solved 100/1,000")
	// 300 solves in 19 s since the first, 600 left.
	step(9*time.Second, func() { m.Solved(300) }, "replayed 3,000/3,000 sessions · solved 400/1,000 · ~38s left")
	step(Interval, func() { m.Solved(600) }, "replayed 3,000/3,000 sessions · solved 1,000/1,000")
	m.Finish()
	if s := out.String(); !strings.HasSuffix(s, "\r"+strings.Repeat(" ", utf8.RuneCountInString("replayed 3,000/3,000 sessions · solved 1,000/1,000"))+"\r") {
		t.Errorf("Finish does not clear the line: %q", s[max(0, len(s)-120):])
	}
	before := out.Len()
	c.advance(time.Minute)
	m.Solved(1)
	m.Finish()
	if out.Len() != before {
		t.Errorf("drew after Finish")
	}
}

// A shorter line overwrites a longer one whole.
func TestMeterPads(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	m := New(&out, c.now)
	m.Read(10, 1000)
	c.advance(Interval)
	m.Plan(5, 0)
	c.advance(Interval)
	before := out.Len()
	m.files, m.read = 0, 0 // a line shorter than the one drawn
	m.Replayed(1)
	if got := out.String()[before:]; got != "\rreplayed 1/5 sessions"+strings.Repeat(" ", utf8.RuneCountInString("read 10/1,000 logs · replayed 0/5 sessions")-len("replayed 1/5 sessions")) {
		t.Errorf("redraw %q", got)
	}
}

// Concurrent counts add up, and a nil Meter does nothing.
func TestMeterConcurrent(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := New(&bytes.Buffer{}, c.now)
	m.Plan(800, 800)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.Replayed(1)
				m.Solved(1)
			}
		})
	}
	wg.Wait()
	if m.replay.done != 800 || m.solve.done != 800 {
		t.Errorf("replayed %d, solved %d, want 800 each", m.replay.done, m.solve.done)
	}
	var nilMeter *Meter
	nilMeter.Read(1, 2)
	nilMeter.Plan(1, 1)
	nilMeter.Replayed(1)
	nilMeter.Solved(1)
	nilMeter.Finish()
	if ForTerminal(&bytes.Buffer{}, c.now, true) != nil || ForTerminal(os.Stderr, c.now, false) != nil {
		t.Error("ForTerminal drew on a buffer")
	}
}

package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Tables fit COLUMNS when it is a positive number; a writer that is no
// terminal (a buffer, a file) is otherwise unlimited.
func TestTerminalWidth(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		w       io.Writer
		columns string
		want    int
	}{
		{&bytes.Buffer{}, "100", 100}, {f, "80", 80}, {&bytes.Buffer{}, "", 0}, {f, "", 0},
		{&bytes.Buffer{}, "0", 0}, {&bytes.Buffer{}, "-3", 0}, {&bytes.Buffer{}, "wide", 0},
	} {
		if got := TerminalWidth(c.w, env(c.columns)); got != c.want {
			t.Errorf("%T, COLUMNS=%q: width %d, want %d", c.w, c.columns, got, c.want)
		}
	}
}

// A progress bar draws only on a terminal: a buffer or a file gets
// nothing, however much work is counted.
func TestProgressOffTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "err"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	for _, p := range []Progress{NewProgress(&b, 10), NewProgress(f, 10), NewProgress(&b, 1)} {
		for range 10 {
			if err := p.Add(1); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 || fi.Size() != 0 {
		t.Errorf("off a terminal the bar wrote %q and %d bytes to a file, want nothing", b.String(), fi.Size())
	}
}

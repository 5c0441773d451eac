package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// A table's notes name their inputs as the Output names them (the CLI:
// its flags), else in plain words; a name is as long as its flag, so the
// note wraps the same.
func TestNotesNameInputs(t *testing.T) {
	tb := &Table{Columns: []string{"policy", "cost", "hit rate"}, Right: []bool{false, true, true}, Drop: []int{0, 0, 1},
		Rows: [][]string{{"hermes-default", "$1.00", "80%"}}, Notes: []string{"one workload: {profile} P or {trace} PATH."}}
	var plain bytes.Buffer
	if err := tb.Write(&Output{Writer: &plain, Width: 24}, Text); err != nil {
		t.Fatal(err)
	}
	var named bytes.Buffer
	if err := tb.Write(&Output{Writer: &named, Width: 24, Name: func(in string) string { return "--" + in }}, Text); err != nil {
		t.Fatal(err)
	}
	want := "one workload: --profile\nP or --trace PATH.\n(hit rate hidden to fit\n24 columns; --wide shows\nall)\n"
	if got := named.String(); !strings.HasSuffix(got, want) {
		t.Errorf("named:\n%s\nwant it to end:\n%s", got, want)
	}
	if got, want := plain.String(), strings.NewReplacer("--profile", "profile", "--trace", "trace", "--wide", "wide").Replace(named.String()); got != want {
		t.Errorf("plain:\n%s\nwant:\n%s", got, want)
	}
}

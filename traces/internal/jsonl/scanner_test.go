package jsonl

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

func TestScanner(t *testing.T) {
	in := "{\"a\":1}\n\n{bad\r\n{\"a\":\"\xff\"}\n" + strings.Repeat("x", 40) + "\n{\"a\":2}\n{\"a\":"
	var w traces.Warnings
	sc := NewScanner(strings.NewReader(in), "f.jsonl", &w)
	sc.maxLine = 32
	var got []int
	var lines []int
	for sc.Scan() {
		var v struct{ A any }
		if sc.Decode(&v) {
			if f, ok := v.A.(float64); ok {
				got = append(got, int(f))
			} else {
				got = append(got, -1)
			}
			lines = append(lines, sc.Line())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, -1, 2}; !equal(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	if want := []int{1, 4, 6}; !equal(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
	want := "warning: kept line with invalid UTF-8 (bad bytes replaced): 1 line (first at f.jsonl:4)\n" +
		"warning: skipped line longer than 64 MiB: 1 line (first at f.jsonl:5)\n" +
		"warning: skipped line with invalid JSON: 1 line (first at f.jsonl:3)\n" +
		"warning: skipped truncated last line: 1 line (first at f.jsonl:7)\n"
	if got := w.String(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

func TestScannerLongLineAcrossBuffers(t *testing.T) {
	// A line longer than the bufio buffer but under the limit is kept whole.
	long := `{"a":"` + strings.Repeat("y", 200<<10) + `"}`
	var w traces.Warnings
	sc := NewScanner(strings.NewReader(long+"\n"), "f", &w)
	if !sc.Scan() {
		t.Fatal("no line")
	}
	if len(sc.Bytes()) != len(long) {
		t.Errorf("line length %d, want %d", len(sc.Bytes()), len(long))
	}
	if sc.Scan() {
		t.Error("extra line")
	}
	if w.Total() != 0 {
		t.Errorf("warnings: %s", w.String())
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FailUnread fails a file with lines none of which decoded (issue 27: a
// file of junk read as a log with nothing in it, exit 0), and no other.
func TestFailUnread(t *testing.T) {
	for in, fail := range map[string]bool{
		"junk\n{bad\n":           true,
		"\n\njunk\n\n":           true,
		`{"trunc":`:              true,
		"":                       false,
		"\n \n":                  false,
		"junk\n{\"a\":1}\nbad\n": false,
	} {
		var w traces.Warnings
		sc := NewScanner(strings.NewReader(in), "f.jsonl", &w)
		for sc.Scan() {
			var v any
			sc.Decode(&v)
		}
		sc.FailUnread()
		got := w.Failed() == 1 && slices.Contains(w.List(), traces.Warning{Reason: traces.WarnUnreadFile, Count: 1, First: "f.jsonl"})
		if got != fail || !fail && w.Failed() != 0 {
			t.Errorf("%q: failed %d, warnings %v; want failed %v", in, w.Failed(), w.List(), fail)
		}
	}
}

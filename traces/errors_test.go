package traces

import (
	"reflect"
	"strings"
	"testing"
)

// AddList is how merge rebuilds a run's warnings from the list a shard
// wrote: counts add up, and a reason keeps the place w saw first.
func TestWarningsAddList(t *testing.T) {
	var w Warnings
	w.Add("a.jsonl", 3, "skipped x")
	w.AddList([]Warning{
		{Reason: "skipped x", Count: 2, First: "b.jsonl:1"},
		{Reason: "kept y", Count: 4, First: "c.jsonl:9"},
		{Reason: "ignored", Count: 0, First: "d.jsonl:1"},
	})
	want := []Warning{
		{Reason: "kept y", Count: 4, First: "c.jsonl:9"},
		{Reason: "skipped x", Count: 3, First: "a.jsonl:3"},
	}
	if got := w.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("List() = %+v, want %+v", got, want)
	}
	if w.Total() != 7 {
		t.Errorf("Total() = %d, want 7", w.Total())
	}
}

// TestWarningsEscapeNames pins issue 27's terminal injection through
// warnings: a file name or session id holding an escape sequence or a
// line break was printed raw on stderr, and could forge a "ctxsim:" line.
func TestWarningsEscapeNames(t *testing.T) {
	w := &Warnings{}
	w.Add("logs/\x1b]0;pwned\x07.jsonl", 3, "skipped invalid JSON")
	w.AddPlace("s1\nctxsim: all clear", WarnDupSession)
	out := w.String()
	if strings.ContainsAny(out, "\x1b\x07") || strings.Count(out, "\n") != 2 || strings.Contains(out, "\nctxsim") {
		t.Errorf("warnings printed a control character or a forged line:\n%q", out)
	}
	if !strings.Contains(out, `logs/\x1b]0;pwned\x07.jsonl:3`) || !strings.Contains(out, `s1\nctxsim: all clear`) {
		t.Errorf("names not shown escaped:\n%s", out)
	}
}

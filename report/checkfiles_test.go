package report

import (
	"bytes"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

func TestWriteFileChecks(t *testing.T) {
	checks := []traces.FileCheck{
		{File: "a.jsonl", OK: true, Session: "s1", Events: 4, Calls: 2, BilledCalls: 1},
		{File: "b.jsonl", Problems: []string{"b.jsonl:3: time goes backwards", "b.jsonl:5: tool_result answers no tool_use"}},
	}
	var text bytes.Buffer
	if err := WriteFileChecks(&text, false, checks); err != nil {
		t.Fatal(err)
	}
	want := "a.jsonl: OK: session s1, 4 events, 2 calls (1 with usage)\nb.jsonl:3: time goes backwards\nb.jsonl:5: tool_result answers no tool_use\n"
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	var js bytes.Buffer
	if err := WriteFileChecks(&js, true, checks); err != nil {
		t.Fatal(err)
	}
	// A good file lists no problems as [], not null; the input is not
	// changed.
	if !bytes.Contains(js.Bytes(), []byte(`"problems": []`)) || !bytes.Contains(js.Bytes(), []byte(`"b.jsonl:5: tool_result answers no tool_use"`)) {
		t.Errorf("json:\n%s", js.String())
	}
	if checks[0].Problems != nil {
		t.Error("WriteFileChecks changed its input")
	}
}

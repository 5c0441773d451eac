package jsonl

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// TestSniff: the first line decides, read whole however long it is (a
// 70 KiB line once made a JSONL file look like one broken document), and
// the returned reader gives back every byte.
func TestSniff(t *testing.T) {
	long := `{"text":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, tc := range []struct {
		name, in string
		lines    bool
	}{
		{"jsonl", "{\"a\":1}\n{\"a\":2}\n", true},
		{"long first line", long + "\n{\"a\":2}\n", true},
		{"one line, no newline", `{"a":1}`, true},
		{"pretty document", "{\n  \"a\": 1\n}\n", false},
		{"array", "[{\"a\":1},\n{\"a\":2}]", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest, lines, err := Sniff(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if lines != tc.lines {
				t.Errorf("lines = %v, want %v", lines, tc.lines)
			}
			got, err := io.ReadAll(rest)
			if err != nil || string(got) != tc.in {
				t.Errorf("rest gave %d bytes (err %v), want the %d of the input", len(got), err, len(tc.in))
			}
		})
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\": }\n")
	var v map[string]any
	err := SyntaxError("e.json", data, json.Unmarshal(data, &v))
	var se *traces.SyntaxError
	if !errors.As(err, &se) || se.File != "e.json" || se.Line != 3 {
		t.Fatalf("err = %v, want e.json:3", err)
	}
}

package runner

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/ctxsim/ctxsim/internal/sumline"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// FuzzReadJournal reads any bytes as a sweep's cells.jsonl, with two
// oracles: what is refused names the file and a line of it; what is read,
// written back line by line, reads back equal.
func FuzzReadJournal(f *testing.F) {
	var seed bytes.Buffer
	run := results.RunSummary{Trace: "s", Policy: "p[a=1]", Requests: 3, CostUSD: 0.25, CacheHitRate: 0.5}
	for _, l := range []JournalLine{{Cell: "p[a=1]", Tenant: "t", Of: 1, Run: &run}, {Cell: "p[a=2]", Tenant: "t", Of: 0}} {
		b, err := sumline.Line(l)
		if err != nil {
			f.Fatal(err)
		}
		seed.Write(b)
	}
	f.Add(seed.Bytes())
	f.Add(append(bytes.Clone(seed.Bytes()), `{"sum":"00`...))                                 // torn last line
	f.Add(bytes.Replace(seed.Bytes(), []byte(`"cost_usd":0.25`), []byte(`"cost_usd":-1`), 1)) // edited
	f.Add([]byte(`{"cell":"p","tenant":"t","of":1}` + "\n"))                                  // no sum
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ReadJournal(bytes.NewReader(data), "cells.jsonl", nil)
		if err != nil {
			var se *traces.SyntaxError
			if !errors.As(err, &se) || se.File != "cells.jsonl" || se.Line < 1 || se.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("refused without naming file and line: %v", err)
			}
			return
		}
		var again bytes.Buffer
		w := sumline.NewWriter(&again)
		for _, l := range lines {
			if err := w.Encode(l); err != nil {
				t.Fatal(err)
			}
		}
		back, err := ReadJournal(bytes.NewReader(again.Bytes()), "again.jsonl", func(int) { t.Fatal("a line written whole was dropped") })
		if err != nil {
			t.Fatalf("read, written back, refused: %v", err)
		}
		if len(lines) != len(back) || len(lines) > 0 && !reflect.DeepEqual(lines, back) {
			t.Fatalf("read %+v\nwritten back and read %+v", lines, back)
		}
	})
}

package claudecode

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// FuzzImport checks that no input panics the importer or the usage scan,
// that both agree on what was billed, and that what they import validates
// as native after a write/read round trip.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"short.jsonl", "tool_heavy.jsonl"} {
		b, err := os.ReadFile(testdata + "/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(goodUser + "\n" + goodCall + "\n"))
	f.Add([]byte(goodUser + "\n" + goodCall[:70]))
	f.Add([]byte("{\"type\":\"assistant\"}\n\xff\xfe\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","timestamp":"x","compactMetadata":{"trigger":"manual","preTokens":-4}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var w traces.Warnings
		s, err := readSession(bytes.NewReader(data), "f.jsonl", &w)
		if err != nil {
			if !strings.Contains(err.Error(), "no line has a valid timestamp") {
				t.Fatalf("readSession: %v", err)
			}
			return
		}
		var w2 traces.Warnings
		su, err := scanFile(bytes.NewReader(data), "f.jsonl", &w2)
		if err != nil {
			t.Fatalf("scanFile: %v", err)
		}
		var iu, su0 traces.Usage
		if s != nil {
			iu, _ = billed(s)
		}
		if su != nil {
			su0 = su.Total()
		}
		if iu != su0 && w.Total() == 0 {
			t.Errorf("import billed %+v, scan %+v", iu, su0)
		}
		if s == nil {
			return
		}
		var buf bytes.Buffer
		if err := traces.WriteSession(&buf, s); err != nil {
			t.Fatalf("WriteSession: %v", err)
		}
		back, err := traces.ReadSession(bytes.NewReader(buf.Bytes()), "native")
		if err != nil {
			t.Fatalf("imported session does not read back: %v", err)
		}
		var again bytes.Buffer
		if err := traces.WriteSession(&again, back); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("native round trip changed the bytes (err %v)", err)
		}
	})
}

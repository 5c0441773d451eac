package claudecode

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// FuzzImport checks that no input panics the importer or the usage scan,
// that both agree on what was billed, and that what they import survives a
// native write → read → write byte for byte.
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
		ss, err := readSession(bytes.NewReader(data), "f.jsonl", &w)
		if err != nil {
			if !strings.Contains(err.Error(), "no line has a valid timestamp") {
				t.Fatalf("readSession: %v", err)
			}
			return
		}
		var w2 traces.Warnings
		fu, err := scanFile(bytes.NewReader(data), "f.jsonl", &w2)
		if err != nil {
			t.Fatalf("scanFile: %v", err)
		}
		var iu, su0 traces.Usage
		for _, s := range ss {
			u, _ := billed(s)
			iu = iu.Add(u)
		}
		if fu.main != nil {
			su0 = fu.main.Total()
		}
		if iu != su0 && w.Total() == 0 {
			t.Errorf("import billed %+v, scan %+v", iu, su0)
		}
		for _, s := range ss {
			tracetest.RoundTrip(t, s)
		}
	})
}

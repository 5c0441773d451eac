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
// that both agree on what was billed, that no total is negative, that the
// scan accounts for every line (used or warned about), and that what they
// import survives a native write → read → write byte for byte.
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
	// Issue 10's defects: wrapped, negative, fractional and non-numeric
	// counts, a split that does not add up, conflicting duplicate lines in
	// either order, junk and deep nesting.
	for _, u := range []string{`"output_tokens":999999999999999999`, `"output_tokens":-5`, `"output_tokens":1.5`, `"output_tokens":"5"`, `"ephemeral_1h_input_tokens":70`} {
		f.Add([]byte(goodUser + "\n" + strings.Replace(strings.Replace(goodCall, `"output_tokens":5`, u, 1), `"ephemeral_1h_input_tokens":0`, u, 1) + "\n"))
	}
	conflict := strings.Replace(goodCall, `"input_tokens":3`, `"input_tokens":9`, 1)
	f.Add([]byte(goodUser + "\n" + goodCall + "\n" + conflict + "\n"))
	f.Add([]byte(goodUser + "\n" + conflict + "\n" + goodCall + "\n"))
	f.Add([]byte(goodUser + "\n\x00\x01\x02\n" + strings.Repeat("[", 20000) + "\n" + goodCall + "\n"))
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
		su0 = fu.main.Total()
		for _, u := range []traces.Usage{iu, su0} {
			if u.Input < 0 || u.CacheWrite5m < 0 || u.CacheWrite1h < 0 || u.CacheRead < 0 || u.Output < 0 {
				t.Fatalf("negative total %+v", u)
			}
		}
		if miss := fu.main.lines - fu.main.used; miss > w2.Total() {
			t.Fatalf("scan: %d lines neither used nor warned about", miss)
		}
		if iu != su0 && w.Total() == 0 {
			t.Errorf("import billed %+v, scan %+v", iu, su0)
		}
		for _, s := range ss {
			tracetest.RoundTrip(t, s)
		}
	})
}

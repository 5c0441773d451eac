package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// FuzzRead reads any bytes as a summary.json (a --results or --baseline
// file), with two oracles: what is refused names the file and a line of
// it; what is read, written back, reads back equal.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"../testdata/baseline.json", "../cmd/ctxsim/testdata/check-results.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	run := `{"trace":"t","policy":"p","requests":3,"cost_usd":0.5,"cache_hit_rate":0.5,"occupancy":{"max":0.4},"compactions":{},"latency_ms":{"p95":10}}`
	for _, s := range []string{
		`{"runs":[` + run + `]}`,
		`{"runs":[` + run + `,` + run + `]}`,
		"{\"runs\":[\n" + run + "\n]}\n{}",
		`{"runs":[{"trace":"t","policy":"p","cost_usd":-1e9,"cache_hit_rate":5}]}`,
		`{"runs":[{"trace":"t"}]}`, `{"runs":5}`, `{}`, `[`, "",
		`{"runs":[` + run + `],"warnings":[{"reason":"r","count":2,"first":"f:1"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(bytes.NewReader(data), "summary.json")
		if err != nil {
			var se *traces.SyntaxError
			if !errors.As(err, &se) || se.File != "summary.json" || se.Line < 1 || se.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("refused without naming file and line: %v", err)
			}
			return
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Read(bytes.NewReader(b), "again.json")
		if err != nil {
			t.Fatalf("read, written back, refused: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(res, again) {
			t.Fatalf("read %+v\nwritten back and read %+v", res, again)
		}
	})
}

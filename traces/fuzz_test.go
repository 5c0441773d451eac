package traces

import (
	"bytes"
	"testing"
)

// FuzzNativeReader: no input panics the reader, and whatever reads writes
// back to bytes that read back to the same bytes again.
func FuzzNativeReader(f *testing.F) {
	hdr := `{"format":"ctxsim-trace","version":1,"session":{"id":"s","source":"cli","model":"claude-opus-4-6","children":["c"]}}`
	f.Add([]byte(hdr + "\n"))
	f.Add([]byte(hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"user","blocks":[{"type":"text","text":"hi"}]}` + "\n"))
	f.Add([]byte(hdr + "\n" + `{"t":"2026-01-01T00:00:01.5+02:00","kind":"assistant","model":"m","usage":{"input":1,"cache_write_5m":2,"cache_write_1h":3,"cache_read":4,"output":5},"meta":{"b":"1","a":"2"}}` + "\n"))
	f.Add([]byte(hdr + "\n\n\n" + `{"t":"2026-01-01T00:00:00Z","kind":"compaction","meta":{"trigger":"auto"}}`))
	f.Add([]byte("{}\n{\"kind\":\"user\"}"))
	// Issue 10: counts that wrapped totals negative.
	f.Add([]byte(hdr + "\n" + `{"t":"2026-01-01T00:00:00Z","kind":"assistant","usage":{"input":999999999999999999,"output":-1}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSession(bytes.NewReader(data), "f")
		if err != nil {
			return
		}
		var a bytes.Buffer
		if err := WriteSession(&a, s); err != nil {
			t.Fatalf("WriteSession of a read session: %v", err)
		}
		back, err := ReadSession(bytes.NewReader(a.Bytes()), "f")
		if err != nil {
			t.Fatalf("written session does not read back: %v\n%s", err, a.Bytes())
		}
		var b bytes.Buffer
		if err := WriteSession(&b, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("round trip changed bytes:\n%s\n%s", a.Bytes(), b.Bytes())
		}
		for i := range s.Events {
			if u := s.Events[i].Usage; u != nil && (u.Input > MaxCallTokens || u.CacheWrite5m > MaxCallTokens ||
				u.CacheWrite1h > MaxCallTokens || u.CacheRead > MaxCallTokens || u.Output > MaxCallTokens) {
				t.Fatalf("event %d: usage %+v over 10^9 read without error", i, *u)
			}
		}
	})
}

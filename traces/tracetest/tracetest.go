package tracetest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// Kinds is s's event kinds separated by spaces, e.g. "user assistant tool".
func Kinds(s *traces.Session) string {
	var b strings.Builder
	for i, e := range s.Events {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(e.Kind))
	}
	return b.String()
}

// RoundTrip writes s as a native trace, reads it back and writes it again.
// It fails t unless the reader accepts the trace, gives back as many
// events, and the second write is byte-identical to the first: a field the
// writer or reader dropped would change the bytes.
func RoundTrip(t testing.TB, s *traces.Session) {
	t.Helper()
	var a bytes.Buffer
	if err := traces.WriteSession(&a, s); err != nil {
		t.Fatalf("%s: write: %v", s.ID, err)
	}
	back, err := traces.ReadSession(bytes.NewReader(a.Bytes()), s.ID)
	if err != nil {
		t.Errorf("%s: the native reader rejects the import: %v", s.ID, err)
		return
	}
	if len(back.Events) != len(s.Events) {
		t.Errorf("%s: read %d events, wrote %d", s.ID, len(back.Events), len(s.Events))
	}
	var b bytes.Buffer
	if err := traces.WriteSession(&b, back); err != nil {
		t.Fatalf("%s: write back: %v", s.ID, err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("%s: write → read → write changed the bytes", s.ID)
	}
}

// Bounded fails t unless every usage count of s is a count one call can
// bill: 0 to traces.MaxCallTokens (readers must resolve the rest, with a
// warning). Fuzz targets call it on everything they read.
func Bounded(t testing.TB, s *traces.Session) {
	t.Helper()
	for i := range s.Events {
		u := s.Events[i].Usage
		if u == nil {
			continue
		}
		for _, n := range []int64{u.Input, u.CacheWrite5m, u.CacheWrite1h, u.CacheRead, u.Output} {
			if n < 0 || n > traces.MaxCallTokens {
				t.Fatalf("%s event %d: usage %+v out of 0..10^9", s.ID, i, *u)
			}
		}
	}
}

// DateStamps dates every stamp a traces/filecache cache keeps in dir (its
// *.stamp files) an hour after it was written, as if remembered well after
// the logs' last change: tests over logs just written or copied need it,
// since a stamp remembered within seconds of its file's change is not
// trusted. It reads no clock: a stamp is written after its log changed,
// so its own time plus an hour is past the racy window.
func DateStamps(t testing.TB, dir string) {
	t.Helper()
	stamps, err := filepath.Glob(filepath.Join(dir, "*.stamp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stamps {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		at := fi.ModTime().Add(time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// Endless is a reader of C without end, failing once it has given more
// than Limit bytes (N so far): what /dev/zero or `yes` named as a file is
// to a reader, with a stop for a reader that never ends.
type Endless struct {
	C        byte
	Limit, N int64
}

func (e *Endless) Read(p []byte) (int, error) {
	if e.N > e.Limit {
		return 0, io.ErrShortBuffer
	}
	for i := range p {
		p[i] = e.C
	}
	e.N += int64(len(p))
	return len(p), nil
}

// Projects lays out logs as Claude Code keeps them, one folder per
// project: projects maps a folder's name to the files of src it holds,
// copied under a temporary root, which it returns.
func Projects(t testing.TB, src string, projects map[string][]string) string {
	t.Helper()
	root := t.TempDir()
	for dir, files := range projects {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(root, dir, f), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

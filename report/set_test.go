package report

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSetAtomic pins "output sets are atomic file by file but not as
// a set": a failed report.html left new records beside an old report.
func TestWriteSetAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteSetAtomic(dir, []SetFile{{"records.jsonl", write("old records")}, {"report.html", write("old report")}}); err != nil {
		t.Fatal(err)
	}
	err := WriteSetAtomic(dir, []SetFile{
		{"records.jsonl", write("new records")},
		{"report.html", func(io.Writer) error { return errors.New("cannot render") }},
	})
	if err == nil {
		t.Fatal("a failed file did not fail the set")
	}
	for name, want := range map[string]string{"records.jsonl": "old records", "report.html": "old report"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q: the old set untouched", name, b, err, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.tmp*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	if err := WriteSetAtomic(dir, []SetFile{{"records.jsonl", write("new records")}, {"report.html", write("new report")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report.html")); string(b) != "new report" {
		t.Errorf("report.html = %q after a good write", b)
	}
}

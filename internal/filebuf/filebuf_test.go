package filebuf

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

func TestRead(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789"), 100_000)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, release, err := Read(f)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("a file: %v, %d bytes of %d", err, len(b), len(want))
	}
	release()
	// A reader that cannot say its size, a byte at a time: grown as read.
	b, release, err = Read(iotest.OneByteReader(bytes.NewReader(want[:5000])))
	if err != nil || !bytes.Equal(b, want[:5000]) {
		t.Fatalf("a reader: %v, %d bytes", err, len(b))
	}
	release()
	boom := errors.New("boom")
	if _, release, err = Read(io.MultiReader(bytes.NewReader(want[:10]), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Fatalf("an error: %v", err)
	}
	release()
}

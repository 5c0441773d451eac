package cachedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Trim keeps the most recently used entries within the bound, removes the
// dropped files and stale temporary ones, and leaves a fresh temporary file
// and anything else alone.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	write := func(name string, size int, age time.Duration) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("a.e", 10, 4*time.Minute) // oldest: goes
	write("b.e", 10, 3*time.Minute) // goes
	write("c.e", 10, 2*time.Minute)
	write("d.e", 10, time.Minute)
	write("old.gob", 1, 0)
	write("x.e.123.tmp", 1, 2*time.Hour)
	write("y.e.456.tmp", 1, time.Minute)
	write("notes.txt", 100, 5*time.Hour)
	entry := func(n string) bool { return strings.HasSuffix(n, ".e") }
	drop := func(n string) bool { return strings.HasSuffix(n, ".gob") }
	if err := Trim(dir, entry, drop, 25, func() time.Time { return now }); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if want := "c.e d.e notes.txt y.e.456.tmp"; strings.Join(got, " ") != want {
		t.Errorf("kept %v, want %s", got, want)
	}
	if err := Trim(filepath.Join(dir, "missing"), entry, nil, 0, nil); err == nil {
		t.Error("a missing directory: no error")
	}
}

// Unseal gives back what Seal sealed, and refuses another magic, a cut
// file and a flipped byte.
func TestSeal(t *testing.T) {
	b := Seal("magic1", []byte("body"))
	if body, err := Unseal(b, "magic1", "an entry"); err != nil || string(body) != "body" {
		t.Fatalf("%q, %v", body, err)
	}
	if _, err := Unseal(b, "magic2", "an entry"); err == nil || err.Error() != "not an entry" {
		t.Errorf("another magic: %v", err)
	}
	if _, err := Unseal(b[:5], "magic1", "an entry"); err == nil {
		t.Error("a cut file unsealed")
	}
	flipped := append([]byte{}, b...)
	flipped[7] ^= 1
	if _, err := Unseal(flipped, "magic1", "an entry"); err == nil || err.Error() != "bad checksum" {
		t.Errorf("a flipped byte: %v", err)
	}
}

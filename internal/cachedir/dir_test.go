package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Dir's warnings carry the cache's name, each once; the failure that
// turns it off is one warning however often it recurs; a hit is dated by
// the clock; Trim does nothing for a run that wrote nothing.
func TestDir(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := NewDir(t.TempDir(), "test cache", Options{Build: "b", Now: func() time.Time { return now }}, 10)
	if d.MaxBytes != 10 {
		t.Errorf("MaxBytes %d, want the default 10", d.MaxBytes)
	}
	d.Warn("%s: spoiled", "x")
	d.Warn("%s: spoiled", "x")
	if d.Off() {
		t.Error("off before TurnOff")
	}
	d.TurnOff(errors.New("disk full"), "going without it")
	d.TurnOff(errors.New("disk full again"), "going without it")
	want := []string{"test cache: x: spoiled", "test cache: disk full (going without it)"}
	if got := d.Warnings(); !d.Off() || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("off %v, warnings %q; want off and %q", d.Off(), got, want)
	}

	// Two entries of 8 bytes over a bound of 10: the older goes, but only
	// after a run that wrote.
	old, recent := filepath.Join(d.Path, "a.e"), filepath.Join(d.Path, "b.e")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("12345678"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(recent, now.Add(-2*time.Hour), now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	d.Touch(recent) // a hit: now the most recently used
	if fi, err := os.Stat(recent); err != nil || !fi.ModTime().Equal(now) {
		t.Fatalf("touched entry dated %v (%v), want %v", fi.ModTime(), err, now)
	}
	entry := func(name string) bool { return strings.HasSuffix(name, ".e") }
	if err := d.Trim(false, entry, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("a run that wrote nothing trimmed: %v", err)
	}
	if err := d.Trim(true, entry, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the least recently used entry is still there (%v)", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the entry just used went: %v", err)
	}
}

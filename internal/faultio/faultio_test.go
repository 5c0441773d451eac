package faultio

import (
	"bytes"
	"errors"
	"testing"
)

// The first After writes pass whole; the next is torn in half and fails.
func TestKillWriter(t *testing.T) {
	var b bytes.Buffer
	k := &KillWriter{W: &b, After: 1}
	if n, err := k.Write([]byte("cell1\n")); n != 6 || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if n, err := k.Write([]byte("cell2\n")); n != 3 || !errors.Is(err, ErrKilled) {
		t.Fatalf("second write: %d, %v; want 3 and ErrKilled", n, err)
	}
	if got := b.String(); got != "cell1\ncel" {
		t.Errorf("written %q, want a torn last line", got)
	}
}

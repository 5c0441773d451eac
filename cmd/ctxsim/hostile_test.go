package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nativeWith writes testdata/breakeven-gaps.jsonl as session id with
// parent, and returns its path.
func nativeWith(t *testing.T, dir, id, parent string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/breakeven-gaps.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	head := `"session":{"id":"` + id + `"`
	if parent != "" {
		head += `,"parent":"` + parent + `"`
	}
	s := strings.Replace(string(b), `"session":{"id":"gappy"`, head, 1)
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// withDeadline fails the test if f does not return in time: the defect is
// a hang, and a hung test is a poor report of it.
func withDeadline(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// TestParentCycleEnds pins issue 10's hang: sessions that name each other
// (or themselves) as parent looped forever in run, compare and whatif.
func TestParentCycleEnds(t *testing.T) {
	dir := t.TempDir()
	nativeWith(t, dir, "a", "b")
	nativeWith(t, dir, "b", "a")
	nativeWith(t, dir, "c", "c")
	for _, args := range [][]string{
		{"run", "--trace", dir},
		{"compare", "--trace", dir},
	} {
		var code int
		var errs string
		withDeadline(t, time.Minute, func() { code, _, errs = runCmd(t, args...) })
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
		for _, c := range []string{"(a → b → a)", "(c → c)"} {
			if !strings.Contains(errs, c) {
				t.Errorf("%v: stderr does not report the cycle %s:\n%s", args, c, errs)
			}
		}
	}
}

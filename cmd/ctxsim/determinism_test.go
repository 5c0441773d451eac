package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeterminismEmbeddedSuite runs "ctxsim compare" on the embedded suite
// (recorded sessions, every synthetic profile, every preset) on one worker
// and on four, and checks that stdout and every file of --out are the same
// bytes: the pool's completion order must never reach the output.
func TestDeterminismEmbeddedSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the embedded suite twice (~10 s)")
	}
	files := []string{"records.jsonl", "summary.json", "report.html"}
	type result struct {
		stdout string
		files  map[string][]byte
	}
	runAt := func(jobs string) result {
		dir := filepath.Join(t.TempDir(), "out")
		code, out, errs := runCmd(t, "compare", "--json", "-j", jobs, "--out", dir)
		require.Equal(t, exitOK, code, "compare -j %s: %s", jobs, errs)
		r := result{stdout: out, files: map[string][]byte{}}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			r.files[f] = b
		}
		return r
	}
	one, four := runAt("1"), runAt("4")
	if len(one.stdout) < 1000 {
		t.Fatalf("compare --json printed only %d bytes", len(one.stdout))
	}
	if one.stdout != four.stdout {
		t.Errorf("compare --json stdout differs between -j 1 and -j 4 (%d vs %d bytes) at byte %d",
			len(one.stdout), len(four.stdout), firstByteDiff([]byte(one.stdout), []byte(four.stdout)))
	}
	// The embedded suite's report stays under 1 MB: small multiples and
	// overview bars, not per-call tables (those are in records.jsonl).
	if n := len(one.files["report.html"]); n > 1<<20 {
		t.Errorf("report.html is %d bytes, want under 1 MB", n)
	}
	for _, f := range files {
		a, b := one.files[f], four.files[f]
		if string(a) != string(b) {
			t.Errorf("%s differs between -j 1 and -j 4 (%d vs %d bytes) at byte %d", f, len(a), len(b), firstByteDiff(a, b))
		}
	}
}

// firstByteDiff is the offset of the first byte where a and b differ.
func firstByteDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

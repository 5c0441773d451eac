package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxsim/ctxsim/policies/estimate"
)

// countingTok is the tokenizer seam: it counts the texts that reach the
// tokenizer.
type countingTok struct {
	estimate.Tokenizer
	calls *atomic.Int64
}

func (c countingTok) Count(s string) int { c.calls.Add(1); return c.Tokenizer.Count(s) }
func (c countingTok) LineAdditive() bool { return true }

// whatifCounting runs whatif in-process with the cache directory dir as
// the environment's default and returns its stdout, stderr and the number
// of texts tokenized.
func whatifCounting(t *testing.T, dir string, args ...string) (string, string, int64) {
	t.Helper()
	var calls atomic.Int64
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, cacheDir: dir,
		tokenizer: func(tok estimate.Tokenizer) estimate.Tokenizer { return countingTok{tok, &calls} }}
	if code := runEnv(e, append([]string{"whatif", "../../testdata/claude-code"}, args...)); code != exitOK {
		t.Fatalf("whatif: exit %d\n%s", code, errb.String())
	}
	return out.String(), errb.String(), calls.Load()
}

// A second whatif over the same logs tokenizes nothing: every count comes
// from the cache the first one wrote. --no-cache tokenizes again.
func TestWhatifSecondRunTokenizesNothing(t *testing.T) {
	dir := t.TempDir()
	out1, err1, calls1 := whatifCounting(t, dir)
	if calls1 == 0 {
		t.Fatal("first whatif tokenized nothing")
	}
	if _, err := os.Stat(filepath.Join(dir, "o200k_base.counts")); err != nil {
		t.Fatalf("no cache file after the first run: %v", err)
	}
	out2, err2, calls2 := whatifCounting(t, dir)
	if calls2 != 0 {
		t.Errorf("second whatif tokenized %d texts, want 0", calls2)
	}
	if out1 != out2 || err1 != err2 {
		t.Errorf("second whatif's output differs:\n%s\n---\n%s", out1, out2)
	}
	// Without the cache every distinct block is tokenized: at least as
	// many texts as the first run, which also shared counts between
	// blocks of equal text.
	out3, _, calls3 := whatifCounting(t, dir, "--no-cache")
	if calls3 < calls1 || out3 != out1 {
		t.Errorf("--no-cache tokenized %d texts (the first run %d); same output: %v", calls3, calls1, out3 == out1)
	}
}

// A corrupt cache is a warning, not a failure, and is rewritten whole.
func TestWhatifCorruptCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o200k_base.counts")
	if err := os.WriteFile(p, []byte("garbage, not a count cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, calls := whatifCounting(t, dir)
	if calls == 0 || !strings.Contains(errs, "ctxsim: warning: "+p+": token-count cache ignored") {
		t.Fatalf("corrupt cache: %d calls, stderr %q", calls, errs)
	}
	if _, errs, calls := whatifCounting(t, dir); calls != 0 || strings.Contains(errs, "token-count cache") {
		t.Errorf("after the rewrite: %d calls, stderr %q", calls, errs)
	}
}

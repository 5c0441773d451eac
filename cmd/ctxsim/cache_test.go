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
	"github.com/ctxsim/ctxsim/sim/hindsight/hindcache"
	"github.com/ctxsim/ctxsim/traces/filecache"
	"github.com/ctxsim/ctxsim/traces/tracetest"
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
	out, errs, calls, _ := whatifCaching(t, dir, args...)
	return out, errs, calls
}

// whatifCaching is whatifCounting with the import cache's work (zero
// without one).
func whatifCaching(t *testing.T, dir string, args ...string) (string, string, int64, filecache.Stats) {
	t.Helper()
	var calls atomic.Int64
	var out, errb bytes.Buffer
	var st filecache.Stats
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, cacheDir: dir,
		tokenizer: func(tok estimate.Tokenizer) estimate.Tokenizer { return countingTok{tok, &calls} }, importStats: &st}
	if code := runEnv(e, append([]string{"whatif", "../../testdata/claude-code"}, args...)); code != exitOK {
		t.Fatalf("whatif: exit %d\n%s", code, errb.String())
	}
	return out.String(), errb.String(), calls.Load(), st
}

// A second whatif over the same logs imports nothing: each log's sessions
// and warnings come from the import cache the first one wrote, and the
// output is the same. An entry spoiled in between is a warning and is
// imported again; --no-cache goes without.
func TestWhatifImportCache(t *testing.T) {
	dir := t.TempDir()
	out1, err1, _, st1 := whatifCaching(t, dir, "--no-hindsight")
	files, err := filepath.Glob("../../testdata/claude-code/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	subs, _ := filepath.Glob("../../testdata/claude-code/*/subagents/*.jsonl")
	n := len(files) + len(subs)
	if st1 != (filecache.Stats{Puts: n, Stamps: n}) || n < 6 {
		t.Fatalf("first run: %+v, want %d puts and stamps (every log)", st1, n)
	}
	tracetest.DateStamps(t, filepath.Join(dir, "imports")) // a fresh clone's logs are new
	out2, err2, _, st2 := whatifCaching(t, dir, "--no-hindsight")
	if st2 != (filecache.Stats{Hits: n, StampHits: n}) {
		t.Errorf("second run: %+v, want %d hits by stamp", st2, n)
	}
	if out1 != out2 || err1 != err2 {
		t.Errorf("second whatif's output differs:\n%s\n---\n%s\n%s---\n%s", out1, out2, err1, err2)
	}
	ents, err := filepath.Glob(filepath.Join(dir, "imports", "*.entry"))
	if err != nil || len(ents) != n {
		t.Fatalf("%d entries in imports/ (%v), want %d", len(ents), err, n)
	}
	if err := os.WriteFile(ents[0], []byte("spoiled"), 0o644); err != nil {
		t.Fatal(err)
	}
	out3, err3, _, st3 := whatifCaching(t, dir, "--no-hindsight")
	if st3 != (filecache.Stats{Hits: n - 1, StampHits: n, Puts: 1, Stamps: 1}) || out3 != out1 || !strings.Contains(err3, "ctxsim: warning: import cache: "+ents[0]+": not an import cache entry (ignored, re-imported)") {
		t.Errorf("spoiled entry: %+v, same output %v, stderr %q", st3, out3 == out1, err3)
	}
	if out4, _, _, st4 := whatifCaching(t, dir, "--no-hindsight", "--no-cache"); st4 != (filecache.Stats{}) || out4 != out1 {
		t.Errorf("--no-cache: %+v, same output %v", st4, out4 == out1)
	}
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

// A second whatif with the hindsight optimum solves nothing: the
// optimum comes from the hindsight cache the first one wrote, and the
// output is the same. A spoiled entry is a warning and is solved again;
// --no-cache and --no-hindsight keep no optima.
func TestWhatifSecondRunSolvesNothing(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, string, hindcache.Stats) {
		t.Helper()
		var out, errb bytes.Buffer
		var st hindcache.Stats
		e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, cacheDir: dir, solveStats: &st}
		if code := runEnv(e, append([]string{"whatif", "../../testdata/claude-code"}, args...)); code != exitOK {
			t.Fatalf("whatif: exit %d\n%s", code, errb.String())
		}
		return out.String(), errb.String(), st
	}
	// whatif solves the baseline's cell only (every policy's regret is
	// against its optimum): the one tenant's optimum is put.
	out1, err1, st1 := run()
	cells := st1.Hits + st1.Puts
	if st1 != (hindcache.Stats{Puts: 1}) {
		t.Fatalf("first run: %+v, want the baseline cell's optimum put", st1)
	}
	out2, err2, st2 := run()
	if st2 != (hindcache.Stats{Hits: cells}) {
		t.Errorf("second run: %+v, want %d hits and nothing solved", st2, cells)
	}
	if out1 != out2 || err1 != err2 {
		t.Errorf("second whatif's output differs:\n%s\n---\n%s", out1, out2)
	}
	ents, err := filepath.Glob(filepath.Join(dir, "hindsight", "*.opt"))
	if err != nil || len(ents) == 0 || len(ents) > st1.Puts {
		t.Fatalf("%d entries (%v), want 1 to %d", len(ents), err, st1.Puts)
	}
	if err := os.WriteFile(ents[0], []byte("spoiled"), 0o644); err != nil {
		t.Fatal(err)
	}
	out3, err3, st3 := run()
	if st3.Puts == 0 || st3.Hits+st3.Puts != cells || out3 != out1 || !strings.Contains(err3, "ctxsim: warning: hindsight cache: "+ents[0]+": not a hindsight cache entry (ignored, solved again)") {
		t.Errorf("spoiled entry: %+v, same output %v, stderr %q", st3, out3 == out1, err3)
	}
	for _, flag := range []string{"--no-cache", "--no-hindsight"} {
		if _, _, st := run(flag); st != (hindcache.Stats{}) {
			t.Errorf("%s: %+v", flag, st)
		}
	}
}

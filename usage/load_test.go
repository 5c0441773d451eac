package usage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// TestLoadFastPath checks Load's scan of trees of Claude Code logs alone
// against its general way (formats detected path by path, mixed trees
// split): the same sessions, warnings and errors, whichever way a case
// takes; and the cases take the way they should.
func TestLoadFastPath(t *testing.T) {
	const cc = "../testdata/claude-code"
	rollout := "../traces/codex/testdata/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"
	copyTo := func(dir, src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mixed, codexOnly, empty, links := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	copyTo(mixed, cc+"/short.jsonl")
	copyTo(mixed, rollout)
	copyTo(codexOnly, rollout)
	copyTo(links, cc+"/tool_heavy.jsonl")
	if err := os.Symlink("/nonexistent.jsonl", filepath.Join(links, "dangling.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		paths []string
		fast  bool
	}{
		{"tree", []string{cc}, true},
		{"file", []string{cc + "/short.jsonl"}, true},
		{"tree and a file in it", []string{cc, cc + "/short.jsonl"}, true},
		{"bad symlink", []string{links}, true},
		{"mixed tree", []string{mixed}, false},
		{"codex tree", []string{codexOnly}, false},
		{"tree and codex tree", []string{cc, codexOnly}, false},
		{"no logs", []string{empty}, false},
		{"missing", []string{filepath.Join(empty, "nope")}, false},
	} {
		_, _, fast, _ := claudecode.ScanUsageIf(isClaudeCode, c.paths...)
		if fast != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.name, fast, c.fast)
		}
		got, gw, gerr := Load(context.Background(), c.paths, "", nil)
		want, ww, werr := load(context.Background(), c.paths, "", nil)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("%s: error %v, want %v", c.name, gerr, werr)
			continue
		}
		if gerr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: sessions differ:\n%+v\nwant\n%+v", c.name, got, want)
		}
		if !reflect.DeepEqual(gw.List(), ww.List()) {
			t.Errorf("%s: warnings %+v, want %+v", c.name, gw.List(), ww.List())
		}
		if c.fast && len(got) == 0 {
			t.Errorf("%s: no sessions: the case tests nothing", c.name)
		}
	}
}

// TestLoadEmptyStateDB pins issue 27's "a 0-byte .db exits 0 silently":
// it was taken for an empty Claude Code log. A file named as a SQLite
// database is read by SQLite whatever it holds (an empty one is a database
// without tables, so not a hermes state.db), by cost's fast path and by
// the general way alike, and a file that is not a database says so.
func TestLoadEmptyStateDB(t *testing.T) {
	dir := t.TempDir()
	empty, junk := filepath.Join(dir, "state.db"), filepath.Join(dir, "junk.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte(`{"type":"user"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		empty: empty + ": not a hermes state.db (an empty file, which SQLite reads as a database without tables)",
		junk:  junk + ": file is not a database",
	} {
		for _, from := range []string{"", "hermes"} {
			ss, _, err := Load(context.Background(), []string{p}, from, nil)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Load(%s, from %q) = %d sessions, error %v; want %q", p, from, len(ss), err, want)
			}
		}
	}
}

package usage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/formats"
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
		_, _, fast, _ := claudecode.ScanUsageIf(context.Background(), isClaudeCode, c.paths...)
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

// ccSession is a Claude Code log of one call with request id req and
// message id msg, at hour h.
func ccSession(id, req, msg string, h int) string {
	ts := fmt.Sprintf("2026-02-12T%02d:02:27Z", h)
	return `{"type":"user","sessionId":"` + id + `","uuid":"u-` + id + `","timestamp":"` + ts + `","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"assistant","sessionId":"` + id + `","uuid":"a-` + id + `","parentUuid":"u-` + id + `","requestId":"` + req + `","timestamp":"` + ts +
		`","message":{"id":"` + msg + `","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"ok"}],` +
		`"usage":{"input_tokens":100,"cache_creation_input_tokens":1000,"cache_read_input_tokens":5000,"output_tokens":50,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0}}}}` + "\n"
}

// TestOneBillPerRequestID pins issue 27's "two sessions sharing a request
// id are both billed by cost and one is silently zeroed by compare and
// whatif": one rule everywhere (traces.MarkCopied, the cost scan, Load's
// general way): a request id is billed once, by the session whose first
// call is earliest, whatever the path order, and each copy skipped is a
// warning in every command, naming the copy's file:line (compare's named
// the session).
func TestOneBillPerRequestID(t *testing.T) {
	for name, msg2 := range map[string]string{"same message id": "msg_1", "another message id": "msg_2"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			// a.jsonl comes first in path order but starts an hour later.
			files := map[string]string{"a.jsonl": ccSession("late", "req_1", msg2, 17), "b.jsonl": ccSession("early", "req_1", "msg_1", 16)}
			for f, data := range files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// cost
			ss, ws, err := Load(context.Background(), []string{dir}, "", nil)
			require.NoError(t, err)
			billedBy := map[string]int{}
			for _, s := range ss {
				billedBy[s.ID] += len(s.Calls)
			}
			if billedBy["early"] != 1 || billedBy["late"] != 0 {
				t.Errorf("cost billed %v, want early's call once", billedBy)
			}
			copyAt := filepath.Join(dir, "a.jsonl") + ":2"
			if n, at := count(ws, traces.WarnCopiedCall), first(ws, traces.WarnCopiedCall); n != 1 || at != copyAt {
				t.Errorf("cost warnings %v: want one copy skipped, at %s", ws.List(), copyAt)
			}
			// compare, whatif, run (traces.Open)
			opened, ow, err := formats.Open(context.Background(), []string{dir}, "", nil)
			require.NoError(t, err)
			billedBy = map[string]int{}
			for _, s := range opened {
				for _, e := range s.Events {
					if e.Kind == traces.Assistant && e.Usage != nil {
						billedBy[s.ID]++
					}
				}
			}
			if billedBy["early"] != 1 || billedBy["late"] != 0 {
				t.Errorf("replays billed %v, want early's call once", billedBy)
			}
			if n, at := count(ow, traces.WarnCopiedCall), first(ow, traces.WarnCopiedCall); n != 1 || at != copyAt {
				t.Errorf("replay warnings %v: want one copy skipped, at %s", ow.List(), copyAt)
			}
			// The files named one by one: each imported alone, the copy
			// found by traces.Open.
			_, ow, err = formats.Open(context.Background(), []string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")}, "", nil)
			require.NoError(t, err)
			if n, at := count(ow, traces.WarnCopiedCall), first(ow, traces.WarnCopiedCall); n != 1 || at != copyAt {
				t.Errorf("replay of two files: warnings %v: want one copy skipped, at %s", ow.List(), copyAt)
			}
		})
	}
	// Load's general way (native traces, or any format but Claude Code's)
	// bills by the same rule.
	dir := t.TempDir()
	for i, id := range []string{"late", "early"} {
		at := time.Date(2026, 2, 12, 17-i, 0, 0, 0, time.UTC)
		s := &traces.Session{ID: id, Model: "claude-sonnet-4-5", Events: []traces.Event{
			{Time: at, Kind: traces.User, Blocks: []traces.Block{{Kind: traces.Text, Text: "hi"}}},
			{Time: at.Add(time.Second), Kind: traces.Assistant, RequestID: "req_1", Blocks: []traces.Block{{Kind: traces.Text, Text: "ok"}},
				Usage: &traces.Usage{Input: 100, Output: 5}}}}
		var b bytes.Buffer
		require.NoError(t, traces.WriteSession(&b, s))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%c.jsonl", 'a'+i)), b.Bytes(), 0o644))
	}
	ss, ws, err := Load(context.Background(), []string{dir}, "", nil)
	require.NoError(t, err)
	copyAt := filepath.Join(dir, "a.jsonl") + ":3" // event 1, after the header
	if len(ss) != 1 || ss[0].ID != "early" || count(ws, traces.WarnCopiedCall) != 1 || first(ws, traces.WarnCopiedCall) != copyAt {
		t.Errorf("native traces: billed %+v, warnings %v, want the copy at %s", ss, ws.List(), copyAt)
	} else if s := ss[0]; s.place(&s.Calls[0]) != filepath.Join(dir, "b.jsonl")+":3" {
		// The call's own place, for an unpriced model's warning.
		t.Errorf("native traces: the call is at %s, want b.jsonl:3", s.place(&s.Calls[0]))
	}
}

func first(w *traces.Warnings, reason string) string {
	for _, x := range w.List() {
		if x.Reason == reason {
			return x.First
		}
	}
	return ""
}

func count(w *traces.Warnings, reason string) int {
	for _, x := range w.List() {
		if x.Reason == reason {
			return x.Count
		}
	}
	return 0
}

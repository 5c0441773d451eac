package formats

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// writeNative imports a Claude Code log and writes it as a native trace
// into dir, returning the file.
func writeNative(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	ss, _, err := claudecode.Import(context.Background(), "../../testdata/claude-code/short.jsonl")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, traces.WriteSession(&b, ss[0]))
	f := filepath.Join(dir, ss[0].ID+".jsonl")
	require.NoError(t, os.WriteFile(f, b.Bytes(), 0o644))
	return f, b.Bytes()
}

// Formats are told apart by content, so users need --from only for the
// ambiguous ones.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	require.NoError(t, os.WriteFile(db, []byte("SQLite format 3\x00rest of the header"), 0o644))
	nat := filepath.Join(dir, "native")
	require.NoError(t, os.Mkdir(nat, 0o755))
	file, _ := writeNative(t, nat)
	for path, want := range map[string]string{
		db:                                       "hermes",
		file:                                     "native",
		nat:                                      "native",
		"../codex/testdata":                      "codex",
		"../../testdata/claude-code/short.jsonl": "claude-code",
		"../../testdata/claude-code":             "claude-code",
	} {
		in, err := traces.DirInput(path)
		require.NoError(t, err)
		got, err := traces.Detect(context.Background(), in, All())
		if err != nil || got.Name() != want {
			t.Errorf("Detect(%s) = %v, %v; want %q", path, got, err, want)
		}
	}
	if _, err := traces.DirInput(filepath.Join(dir, "nope")); err == nil || err.Error() != filepath.Join(dir, "nope")+": no such file or directory" {
		t.Errorf("missing path: err = %v", err)
	}
	// A directory of captures as JSON documents (claude-tap traces, as
	// ../shared/traces/captures holds) or HAR archives, no .jsonl: the
	// capture format, past a JSON file no format takes.
	for _, names := range [][2]string{{"claude-tap-claude.json", "trace_claude.json"}, {"capture.har", "session.har"}} {
		docs := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(docs, "a-package.json"), []byte(`{"name": "not a capture"}`), 0o644))
		b, err := os.ReadFile(filepath.Join("../capture/testdata", names[0]))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(docs, names[1]), b, 0o644))
		in, _ := traces.DirInput(docs)
		if got, err := traces.Detect(context.Background(), in, All()); err != nil || got.Name() != "capture" {
			t.Errorf("Detect(directory of %s) = %v, %v; want capture", names[1], got, err)
		}
	}
	empty := t.TempDir()
	in, _ := traces.DirInput(empty)
	if _, err := traces.Detect(context.Background(), in, All()); err == nil || err.Error() != empty+": no .jsonl files (give log format FORMAT for other logs)" {
		t.Errorf("empty dir: err = %v", err)
	}
}

// "-" reads standard input, detected like a file; every format but the
// SQLite one reads from it.
func TestOpenStdin(t *testing.T) {
	_, data := writeNative(t, t.TempDir())
	ss, _, err := Open(context.Background(), []string{"-"}, "", bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, ss, 1)
	require.Equal(t, "55604662-cf2a-4331-851a-ec234028f8ca", ss[0].ID)
	require.Empty(t, ss[0].Tenant, "native traces keep their own tenant")

	log, err := os.ReadFile("../../testdata/claude-code/short.jsonl")
	require.NoError(t, err)
	ss, _, err = Open(context.Background(), []string{"-"}, "", bytes.NewReader(log))
	require.NoError(t, err)
	require.Len(t, ss, 1)
	require.Equal(t, "-", ss[0].Tenant, "logs under one path share one account")
	require.Greater(t, len(ss[0].Events), 0)

	_, _, err = Open(context.Background(), []string{"-"}, "hermes", bytes.NewReader([]byte("SQLite format 3\x00...")))
	if err == nil || err.Error() != "stdin: a hermes state.db must be a file on disk" {
		t.Errorf("hermes db on stdin: err = %v", err)
	}
	if _, _, err := Open(context.Background(), []string{"-"}, "", nil); err == nil {
		t.Errorf("- without stdin: no error")
	}
}

func TestOpenFrom(t *testing.T) {
	ss, _, err := Open(context.Background(), []string{"../codex/testdata/sessions"}, "codex", nil)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	_, _, err = Open(context.Background(), []string{"../codex/testdata"}, "nope", nil)
	var uf *traces.UnknownFormatError
	if !errors.As(err, &uf) || uf.Name != "nope" || len(uf.Known) != len(All()) {
		t.Errorf("unknown --from: err = %v", err)
	}
}

// A cancelled context stops the walk of a tree before any file is read.
func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, from := range []string{"", "codex", "native", "claude-code", "chatlog"} {
		_, _, err := Open(ctx, []string{"../codex/testdata"}, from, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("from %q: err = %v, want context.Canceled", from, err)
		}
	}
}

// Captures are detected by their first line and read whole, a tree of
// them skipping JSON that is not one.
func TestCaptureDetected(t *testing.T) {
	for _, p := range []string{"../capture/testdata/claude-tap-claude.json", "../capture/testdata/claude-trace.jsonl", "../capture/testdata/capture.har"} {
		ss, _, err := Open(context.Background(), []string{p}, "", nil)
		if err != nil || len(ss) == 0 || ss[0].Format != capture.FormatName {
			t.Errorf("%s: %d sessions, %v", p, len(ss), err)
		}
	}
	ss, w, err := Open(context.Background(), []string{"../capture/testdata"}, "capture", nil)
	if err != nil || len(ss) != 6 {
		t.Errorf("tree: %d sessions, %v", len(ss), err)
	}
	// claude-trace.jsonl and capture.har hold two calls of
	// claude-tap-claude.json again, otlp-genai.json three: the same
	// response ids, billed once.
	if w.Total() != 7 || !strings.Contains(w.String(), traces.WarnCopiedCall) {
		t.Errorf("tree warnings: %v", w)
	}
}

// Open reports the logs it reads as it reads them (a progress line), the
// earlier paths' files added: two paths of 6 and 1 Claude Code logs end
// at 7 of 7, and every count it heard is within what it had found.
func TestOpenProgress(t *testing.T) {
	var mu sync.Mutex
	var last, most, calls int
	bad := 0
	opts := traces.OpenOptions{Formats: All(), Progress: func(read, files int) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if read > files || read < 1 {
			bad++
		}
		last, most = max(last, read), max(most, files)
	}}
	ss, _, err := traces.Open(context.Background(), []string{"../../testdata/claude-code", "../claudecode/testdata/resume/77570c3a.jsonl"}, opts)
	require.NoError(t, err)
	require.NotEmpty(t, ss)
	if last != 7 || most != 7 || calls != 7 || bad > 0 {
		t.Errorf("heard %d counts, the last %d of %d (%d out of range); want 7 of 7", calls, last, most, bad)
	}
}

// Open gives the Claude Code logs of one folder that began in one working
// directory one account (traces.GroupProjects): testdata/claude-code's
// three sessions from /home/marco/projects/spotter share it; 4d5611e5,
// begun elsewhere, is alone.
func TestOpenGroupsProjectFolder(t *testing.T) {
	ss, _, err := Open(context.Background(), []string{"../../testdata/claude-code"}, "", nil)
	require.NoError(t, err)
	accounts := map[string]string{}
	for _, s := range ss {
		if s.Parent == "" {
			accounts[s.ID[:8]] = s.Account
		}
	}
	require.Len(t, accounts, 4)
	shared := accounts["55604662"]
	require.NotEmpty(t, shared)
	require.Equal(t, shared, accounts["491e126e"])
	require.Equal(t, shared, accounts["d6e0bada"])
	require.Empty(t, accounts["4d5611e5"])
}

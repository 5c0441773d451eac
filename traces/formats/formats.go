package formats

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
	"github.com/ctxsim/ctxsim/traces/chatlog"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/codex"
	"github.com/ctxsim/ctxsim/traces/hermes"
)

// All are the formats, in the order detection tries them. Claude Code
// accepts any first line: a log that is nothing else is taken for one.
// chatlog accepts none: its records look like too many other things, so it
// is read only when named.
func All() []traces.Importer {
	return []traces.Importer{traces.Native, Hermes, Codex, Capture, ClaudeCode, Chatlog}
}

// Open reads paths with All (see traces.Open); from forces a format by name,
// "" detects it; "-" reads stdin.
func Open(ctx context.Context, paths []string, from string, stdin io.Reader) ([]*traces.Session, *traces.Warnings, error) {
	return traces.Open(ctx, paths, traces.OpenOptions{Formats: All(), From: from, Stdin: stdin})
}

// Names are the format names, sorted.
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name())
	}
	slices.Sort(out)
	return out
}

// importer adapts a reader function to traces.Importer.
type importer struct {
	name, summary string
	sniff         func(head []byte) bool
	read          func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error)
}

func (i *importer) Name() string           { return i.name }
func (i *importer) Summary() string        { return i.summary }
func (i *importer) Sniff(head []byte) bool { return i.sniff(head) }
func (i *importer) Import(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return i.read(ctx, in)
}

// ClaudeCode reads Claude Code session logs: a session .jsonl, or a tree of
// them (~/.claude/projects), subagents linked to their parents.
var ClaudeCode traces.Importer = &importer{
	name:    "claude-code",
	summary: "Claude Code session logs (~/.claude/projects, a session .jsonl, or a tree of them)",
	sniff:   func([]byte) bool { return true },
	read: func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
		// ImportFS names files display/path-in-FS: display is where FS
		// is rooted. It reads files in parallel and does not take ctx;
		// one session log takes milliseconds.
		display, file := in.Name, false
		if st, err := fs.Stat(in.FS, in.Root); err == nil && !st.IsDir() {
			display, file = filepath.Dir(in.Name), true
			if in.Dir == "" {
				display = ""
			}
		}
		w := &traces.Warnings{}
		var ss []*traces.Session
		var iw *traces.Warnings
		var err error
		o := claudecode.Options{Cache: in.Cache, Progress: in.Progress}
		if file || in.Dir == "" {
			// A session file (it brings its subagents/ directory).
			ss, iw, err = o.ImportFS(ctx, in.FS, in.Root, display)
		} else {
			// A tree: walked by Input.Files, which skips what must not
			// be opened.
			var files []string
			if files, err = in.Files(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, w); err != nil {
				return nil, nil, err
			}
			ss, iw, err = o.ImportFiles(ctx, in.FS, files, display)
		}
		if err == nil {
			err = ctx.Err()
		}
		w.Merge(iw)
		return ss, w, err
	},
}

// Codex reads Codex CLI rollouts: a rollout-*.jsonl, or every one under a
// tree (~/.codex/sessions), one session per file. Under a tree, a .jsonl
// file named otherwise is read when its first line is a session_meta (a
// rollout copied under another name); a file named on the command line is
// read whatever its name.
var Codex traces.Importer = &importer{
	name:    "codex",
	summary: "Codex CLI rollouts (~/.codex/sessions, a rollout-*.jsonl, or a tree of them)",
	sniff:   codex.Sniff,
	read: func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
		w := &traces.Warnings{}
		files, err := in.Files(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, w)
		if err != nil {
			return nil, w, err
		}
		var out []*traces.Session
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return nil, w, err
			}
			fh, err := in.FS.Open(f)
			if err != nil {
				return nil, w, err
			}
			br := bufio.NewReaderSize(fh, traces.HeadSize)
			head, _ := br.Peek(traces.HeadSize)
			if i := bytes.IndexByte(head, '\n'); i >= 0 {
				head = head[:i]
			}
			if f != in.Root && !codex.IsRolloutName(path.Base(f)) && !codex.Sniff(head) {
				fh.Close()
				continue
			}
			s, err := codex.Read(br, in.Display(f), w)
			fh.Close()
			if err != nil {
				return nil, w, err
			}
			out = append(out, s)
		}
		return out, w, nil
	},
}

// Capture reads captured API traffic: claude-tap traces, claude-trace
// RawPair JSONL (what ctxsim record writes) and HAR 1.2 archives, a file or
// every .json, .jsonl and .har file under a tree.
var Capture traces.Importer = captureImporter{&importer{
	name:    capture.FormatName,
	summary: "captured API traffic: claude-trace / ctxsim record JSONL, claude-tap traces, HAR 1.2, OTLP GenAI spans (exact requests and bills)",
	sniff:   capture.Sniff,
	read: func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
		w := &traces.Warnings{}
		ss, err := in.ReadFiles(ctx, func(n string) bool {
			return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json") || capture.IsHARName(n)
		}, w, func(r io.Reader, name string) ([]*traces.Session, error) {
			ss, err := capture.ReadSessions(r, name, w)
			var nc *capture.NotCaptureError
			if errors.As(err, &nc) && name != in.Name {
				// A file of a tree: skipped, counted.
				w.Add(name, 1, capture.WarnNotCapture)
				return nil, nil
			}
			return ss, err
		})
		return ss, w, err
	},
}}

// captureImporter takes a HAR archive by its name (*.har), whose first
// line, pretty-printed, is only "{".
type captureImporter struct{ *importer }

func (captureImporter) SniffName(name string) bool { return capture.IsHARName(name) }

// ReadsDocuments: a directory of claude-tap traces (.json) or HAR archives
// is a capture directory without a .jsonl file (traces.DocumentReader).
func (captureImporter) ReadsDocuments() bool { return true }

// Chatlog reads OpenAI-style message logs: a file, or every .json and
// .jsonl file under a tree.
var Chatlog traces.Importer = &importer{
	name:    "chatlog",
	summary: "OpenAI-style message logs: chat-completions request logs, SWE-agent / OpenHands trajectory sets (synthetic timing when untimed)",
	sniff:   func([]byte) bool { return false },
	read: func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
		w := &traces.Warnings{}
		ss, err := in.ReadFiles(ctx, func(n string) bool {
			return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json")
		}, w, func(r io.Reader, name string) ([]*traces.Session, error) {
			return chatlog.Read(r, name, chatlog.Options{}, w)
		})
		return ss, w, err
	},
}

const sqliteHeader = "SQLite format 3\x00"

// Hermes reads a hermes-agent state.db (read-only; it must be a file on
// disk) or `hermes sessions export` JSON/JSONL.
var Hermes traces.Importer = hermesImporter{&importer{
	name:    "hermes",
	summary: "hermes-agent ~/.hermes/state.db (read-only) or `hermes sessions export` JSON/JSONL; usage is per-session totals only",
	sniff:   func(head []byte) bool { return bytes.HasPrefix(head, []byte(sqliteHeader)) },
	read: func(ctx context.Context, in traces.Input) ([]*traces.Session, *traces.Warnings, error) {
		f, err := in.FS.Open(in.Root)
		if err != nil {
			return nil, &traces.Warnings{}, fmt.Errorf("%s: %w", in.Name, err)
		}
		defer f.Close()
		head := make([]byte, len(sqliteHeader))
		n, _ := io.ReadFull(f, head)
		if string(head[:n]) == sqliteHeader || hermes.IsDBName(in.Root) {
			p, ok := in.OSPath(in.Root)
			if !ok {
				return nil, &traces.Warnings{}, fmt.Errorf("%s: a hermes state.db must be a file on disk", in.Name)
			}
			return hermes.ReadDBWithin(ctx, p, hermes.DefaultDBLimits)
		}
		w := &traces.Warnings{}
		ss, err := hermes.ReadExport(io.MultiReader(bytes.NewReader(head[:n]), f), in.Name, w)
		return ss, w, err
	},
}}

// hermesImporter takes a file named as a SQLite database whatever it
// holds (an empty state.db has no header), so SQLite reads it.
type hermesImporter struct{ *importer }

func (hermesImporter) SniffName(name string) bool { return hermes.IsDBName(name) }

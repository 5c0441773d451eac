package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

func readNative(path string) (*traces.Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return traces.ReadSession(f, path)
}

// loadTraces reads each path: a native trace file, a directory of native
// traces, or a log of another format (a file or a directory tree). from
// forces a format ("native", "claude-code", or a registered importer); ""
// detects it. Sessions come back in a stable order: by path, then as the
// importer returned them.
func loadTraces(paths []string, from string) ([]*traces.Session, *traces.Warnings, error) {
	var out []*traces.Session
	warn := &traces.Warnings{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, errNotFound(err))
		}
		format := from
		if format == "" {
			format, err = detect(p, st)
			if err != nil {
				return nil, nil, err
			}
		}
		var ss []*traces.Session
		var w *traces.Warnings
		switch format {
		case "native":
			ss, err = loadNative(p, st)
		default:
			imp, ok := importers[format]
			if !ok {
				return nil, nil, usagef("--from %q: unknown format (have %s)", format, strings.Join(formatNames(), ", "))
			}
			ss, w, err = imp.load(p)
		}
		if err != nil {
			return nil, nil, err
		}
		if format != "native" {
			// Logs found under one path are one account's: they share
			// the provider's cache, as they did (a session's first call
			// reads the floor the one before it cached).
			for _, s := range ss {
				if s.Tenant == "" {
					s.Tenant = p
				}
			}
		}
		warn.Merge(w)
		out = append(out, ss...)
	}
	return out, warn, nil
}

func errNotFound(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("no such file or directory")
	}
	return err
}

// detect names the format of a path from its content: a SQLite file is a
// hermes state.db; a file (or, for a directory, its first .jsonl file in name
// order) whose first line is the native header is native, one that opens
// with a Codex session_meta record is a Codex rollout; anything else is taken
// for a Claude Code log, the logs people have on disk. Other formats need
// --from.
func detect(p string, st fs.FileInfo) (string, error) {
	first := p
	if st.IsDir() {
		first = ""
		err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil || first != "" {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(q, ".jsonl") {
				first = q
				return filepath.SkipAll
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		if first == "" {
			return "", fmt.Errorf("%s: no .jsonl files (give --from FORMAT for other logs)", p)
		}
	}
	head, err := firstLine(first)
	if err != nil {
		return "", err
	}
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return "hermes", nil
	case bytes.Contains(head, []byte(`"format":"`+traces.FormatName+`"`)):
		return "native", nil
	case bytes.Contains(head, []byte(`"type":"session_meta"`)), bytes.Contains(head, []byte(`"type": "session_meta"`)):
		return "codex", nil
	}
	return "claude-code", nil
}

// firstLine is the start of a file, up to its first newline (4 KiB at most).
func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return buf, nil
}

func loadNative(p string, st fs.FileInfo) ([]*traces.Session, error) {
	if !st.IsDir() {
		s, err := readNative(p)
		if err != nil {
			return nil, err
		}
		return []*traces.Session{s}, nil
	}
	var files []string
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(q, ".jsonl") {
			files = append(files, q)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*traces.Session
	for _, f := range files {
		s, err := readNative(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// embeddedRecorded imports the recorded Claude Code sessions compiled into
// the binary.
func embeddedRecorded() ([]*traces.Session, *traces.Warnings, error) {
	return claudecode.ImportFS(recordedFS(), ".", "testdata/claude-code")
}

func recordedFS() fs.FS { return ctxsim.Recorded() }

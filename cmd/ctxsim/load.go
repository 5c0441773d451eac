package main

import (
	"bufio"
	"bytes"
	"fmt"
	ctxsim "github.com/ctxsim/ctxsim"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// isNative reports whether the file at path starts with the native header.
func isNative(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4096)
	line, err := br.ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return false, nil
	}
	return bytes.Contains(line, []byte(`"format":"`+traces.FormatName+`"`)), nil
}

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

// detect names the format of a path: native if the file (or, for a
// directory, its first .jsonl file in name order) starts with the native
// header, else claude-code, the logs people have on disk.
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
			return "", fmt.Errorf("%s: no .jsonl files", p)
		}
	}
	ok, err := isNative(first)
	if err != nil {
		return "", err
	}
	if ok {
		return "native", nil
	}
	return "claude-code", nil
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

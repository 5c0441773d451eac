package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// importFormats are the log formats `import` reads: every format but the
// native one it writes.
func importFormats() []traces.Importer {
	var out []traces.Importer
	for _, f := range formats.All() {
		if f != traces.Native {
			out = append(out, f)
		}
	}
	return out
}

func importerNames() []string {
	var out []string
	for _, f := range importFormats() {
		out = append(out, f.Name())
	}
	sort.Strings(out)
	return out
}

func lookupImporter(name string) (traces.Importer, error) {
	if im, err := traces.Lookup(importFormats(), name); err == nil {
		return im, nil
	}
	return nil, usagef("unknown format %q: want one of %s", name, strings.Join(importerNames(), ", "))
}

// formatsHelp lists the importers for --help texts.
func formatsHelp() string {
	var b strings.Builder
	b.WriteString("Formats:\n")
	for _, n := range importerNames() {
		im, _ := traces.Lookup(importFormats(), n)
		fmt.Fprintf(&b, "  %-12s %s\n", n, im.Summary())
	}
	return b.String()
}

func init() {
	register(&command{
		name:    "import",
		summary: "convert agent logs (claude-code, ...) to native traces",
		usage:   "FORMAT PATH... -o DIR",
		help: `Import reads agent logs in FORMAT and writes one native trace per session
to DIR as <session-id>.jsonl (written to a temporary file and renamed, so a
failed import never leaves half a file). PATH is a log file or a directory
searched recursively. It prints what it wrote; warnings (lines skipped or
repaired, with counts and the first place) go to stderr.

Examples:
  ctxsim import claude-code ~/.claude/projects -o traces/
  ctxsim import claude-code ~/.claude/projects/-home-me-proj/4d5611e5.jsonl -o /tmp/t
  ctxsim import codex ~/.codex/sessions -o traces/
  ctxsim import hermes ~/.hermes/state.db -o traces/
  ctxsim import --json claude-code testdata/claude-code -o /tmp/t`,
		helpTail: formatsHelp,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			out := fs.StringP("out", "o", "", "directory to write native traces to (created if missing)")
			asJSON := fs.Bool("json", false, `print {"written":[...],"warnings":[...]} instead of text`)
			addFormatTextJSON(fs, asJSON)
			return func(e *env, args []string) error {
				if len(args) < 2 {
					return usagef("want FORMAT and at least one PATH (formats: %s)", strings.Join(importerNames(), ", "))
				}
				if *out == "" {
					return usagef("-o DIR is required")
				}
				im, err := lookupImporter(args[0])
				if err != nil {
					return err
				}
				return runImport(e, im, args[1:], *out, *asJSON)
			}
		},
	})
}

type written struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Events int    `json:"events"`
	Calls  int    `json:"calls"`
}

func runImport(e *env, im traces.Importer, paths []string, dir string, asJSON bool) error {
	var all []*traces.Session
	var ws traces.Warnings
	for _, p := range paths {
		in, err := traces.PathInput(p, e.stdin)
		if err != nil {
			return err
		}
		ss, w, err := im.Import(e.ctx, in)
		if err != nil {
			return err
		}
		ws.Merge(w)
		all = append(all, ss...)
	}
	return writeSessions(e, all, dir, asJSON, im.Name(), &ws)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func countCalls(s *traces.Session) int {
	n := 0
	for i := range s.Events {
		if s.Events[i].Kind == traces.Assistant {
			n++
		}
	}
	return n
}

// fileNameFor makes a session id safe as a file name.
func fileNameFor(id string) string {
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '~'
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s + ".jsonl"
}

// writeTraces writes each session to dir as a native trace named by
// fileNameFor, each file atomically (a temporary file renamed), and says
// what it wrote. Two sessions whose ids map to one file name are an error,
// not a silent overwrite.
//
// The set is written whole or not at all: names are checked for
// collisions before anything is written, the files go to a temporary
// directory beside dir, and only when all are written are they renamed
// into dir (the temporary directory itself when dir did not exist). A
// failure midway leaves no partial directory.
func writeTraces(dir string, ss []*traces.Session) ([]written, error) {
	names := map[string]string{}
	for _, s := range ss {
		name := fileNameFor(s.ID)
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("sessions %q and %q map to the same file %s (nothing written)", prev, s.ID, name)
		}
		names[name] = s.ID
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // gone once renamed; else the partial set
	out := make([]written, 0, len(ss))
	for _, s := range ss {
		name := fileNameFor(s.ID)
		if err := report.WriteFileAtomic(filepath.Join(tmp, name), func(w io.Writer) error { return traces.WriteSession(w, s) }); err != nil {
			return nil, err
		}
		out = append(out, written{ID: s.ID, File: filepath.Join(dir, name), Events: len(s.Events), Calls: countCalls(s)})
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return nil, err
		}
		return out, os.Rename(tmp, dir)
	}
	for _, w := range out {
		if err := os.Rename(filepath.Join(tmp, filepath.Base(w.File)), w.File); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// printWarnings prints the counted warnings of a read, one line a reason.
func printWarnings(e *env, ws *traces.Warnings) {
	fmt.Fprint(e.stderr, ws.String())
}

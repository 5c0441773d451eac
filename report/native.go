package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/internal/safetext"
	"github.com/ctxsim/ctxsim/traces"
)

// Written is one native trace WriteNativeSet wrote.
type Written struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Events int    `json:"events"`
	Calls  int    `json:"calls"`
}

// WriteWritten says what WriteNativeSet wrote, with the warnings of the
// read that produced the sessions: a line a file and a count (from names
// that read's format, "" for generated sessions), or as JSON.
func WriteWritten(w io.Writer, asJSON bool, out []Written, from string, warnings []traces.Warning) error {
	if asJSON {
		return WriteJSON(w, struct {
			Written  []Written        `json:"written"`
			Warnings []traces.Warning `json:"warnings"`
		}{nonNil(out), warnings})
	}
	for _, x := range out {
		fmt.Fprintf(w, "wrote %s (%d events, %d calls)\n", safetext.Line(x.File), x.Events, x.Calls)
	}
	if from != "" {
		fmt.Fprintf(w, "%d sessions from %s\n", len(out), from)
	} else {
		fmt.Fprintf(w, "%d sessions\n", len(out))
	}
	return nil
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

// WriteNativeSet writes each session to dir as a native trace named by
// fileNameFor, each file atomically (a temporary file renamed), and says
// what it wrote. Two sessions whose ids map to one file name are an error,
// not a silent overwrite.
//
// The set is written whole or not at all: names are checked for
// collisions before anything is written, the files go to a temporary
// directory beside dir, and only when all are written are they renamed
// into dir (the temporary directory itself when dir did not exist). A
// failure midway leaves no partial directory.
func WriteNativeSet(dir string, ss []*traces.Session) ([]Written, error) {
	names := map[string]string{}
	for _, s := range ss {
		name := fileNameFor(s.ID)
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("sessions %q and %q map to the same file %s (nothing written)", prev, s.ID, name)
		}
		names[name] = s.ID
	}
	out := make([]Written, 0, len(ss))
	files := make([]SetFile, 0, len(ss))
	for _, s := range ss {
		name := fileNameFor(s.ID)
		files = append(files, SetFile{Name: name, Write: func(w io.Writer) error { return traces.WriteSession(w, s) }})
		out = append(out, Written{ID: s.ID, File: filepath.Join(dir, name), Events: len(s.Events), Calls: countCalls(s)})
	}
	if err := atomicfile.WriteSet(dir, files); err != nil {
		return nil, err
	}
	return out, nil
}

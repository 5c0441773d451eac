package jsonl

import (
	"github.com/ctxsim/ctxsim/traces"
)

// Files is path itself when it is a file, else the regular files under it
// whose name keep accepts, sorted: how every importer finds its logs.
// traces.WalkFiles skips (with a warning in w) what must not be opened.
func Files(path string, keep func(name string) bool, w *traces.Warnings) ([]string, error) {
	return traces.WalkFiles(path, keep, w)
}

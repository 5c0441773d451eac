package main

import (
	"errors"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// loadTraces reads each path (a file, a directory tree, or "-" for stdin)
// in the format from names, or the one detected; see traces.Open.
func loadTraces(e *env, paths []string, from string) ([]*traces.Session, *traces.Warnings, error) {
	ss, w, err := formats.Open(e.ctx, paths, from, e.stdin)
	return ss, w, fromError(err)
}

// fromError makes an unknown --from format a usage error.
func fromError(err error) error {
	var uf *traces.UnknownFormatError
	if errors.As(err, &uf) {
		return usagef("--from %q: unknown format (have %s)", uf.Name, strings.Join(uf.Known, ", "))
	}
	return err
}

// readNative reads one native trace file, or "-" for stdin.
func readNative(e *env, path string) (*traces.Session, error) {
	in, err := traces.PathInput(path, e.stdin)
	if err != nil {
		return nil, err
	}
	f, err := in.FS.Open(in.Root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return traces.ReadSession(f, in.Name)
}

package main

import (
	"errors"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// loadTraces reads each path (a file, a directory tree, or "-" for stdin)
// in the format from names, or the one detected; see traces.Open.
//
// A session with no model call is skipped with a warning (there is nothing
// to replay or bill); a session that cannot be loaded (Warnings.Fail) is
// counted in e.failed, so the command goes on with the rest and exits 1.
func loadTraces(e *env, paths []string, from string) ([]*traces.Session, *traces.Warnings, error) {
	ss, w, err := formats.Open(e.ctx, paths, from, e.stdin)
	if err != nil {
		return nil, nil, fromError(err)
	}
	return keepCalls(e, ss, w, nil), w, nil
}

// keepCalls drops the sessions with no model call (traces.DropCallless;
// stub keeps a shard's sessions read by header only), and adds w to the
// run's warnings and failures.
func keepCalls(e *env, ss []*traces.Session, w *traces.Warnings, stub func(*traces.Session) bool) []*traces.Session {
	kept := traces.DropCallless(ss, w, stub)
	e.noCall += len(ss) - len(kept)
	e.failed += w.Failed()
	e.warn.Merge(w)
	return kept
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

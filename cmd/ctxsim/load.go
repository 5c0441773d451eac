package main

import (
	"errors"
	"strings"

	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/traces"
)

// load loads w (harness.Load) with stdin for "-", prints its warnings on
// stderr and adds them to the run's: a session that cannot be loaded
// (Warnings.Fail) is counted in e.failed, so the command goes on with the
// rest and exits 1; one with no model call, in e.noCall.
func load(e *env, w harness.Workload) (*harness.Loaded, error) {
	w.Stdin = e.stdin
	l, err := harness.Load(e.ctx, w)
	var pe *harness.ProfileError
	if errors.As(err, &pe) {
		return nil, usagef("--profile: %v", pe.Err)
	}
	if err != nil {
		return nil, fromError(err)
	}
	e.noCall += l.Callless
	e.failed += l.Warnings.Failed()
	e.warn.Merge(l.Warnings)
	if l.Warnings.Len() > 0 {
		printWarnings(e, l.Warnings)
	}
	return l, nil
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

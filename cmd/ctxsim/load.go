package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// load loads w (harness.Load) with stdin for "-", prints its warnings on
// stderr and adds them to the run's: a session that cannot be loaded
// (Warnings.Fail) is counted in e.failed, so the command goes on with the
// rest and exits 1; one with no model call, in e.noCall.
func load(e *env, w harness.Workload) (*harness.Loaded, error) {
	w.Stdin = e.stdin
	if e.importCache != nil {
		w.Cache = e.importCache
	}
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

// openImportCache keeps what the importers read from each log in dir
// across runs (traces/filecache), keyed by this executable's build: a run
// over unchanged logs decodes none of them. Its warnings print at exit.
// Without a build ID (not a Go executable?) there is no cache, and a note
// says so.
func openImportCache(e *env, dir string) {
	c, err := filecache.OpenExecutable(dir, time.Now)
	if err != nil {
		fmt.Fprintf(e.stderr, "ctxsim: note: no import cache: %v\n", err)
		return
	}
	e.importCache = c
	e.atExit = append(e.atExit, func() {
		if e.importStats != nil {
			*e.importStats = c.Stats()
		}
		if err := c.Flush(); err != nil {
			fmt.Fprintf(e.stderr, "ctxsim: warning: import cache: %v\n", err)
		}
		for _, w := range c.Warnings() {
			fmt.Fprintf(e.stderr, "ctxsim: warning: %s\n", w)
		}
	})
}

package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/traces"
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

// openCaches opens the caches under dir that are keyed by this build
// (harness.OpenCaches) for the command's run; their warnings print at
// exit.
func openCaches(e *env, st *experiment.Setup, dir string) {
	c, notes := harness.OpenCaches(dir, st, time.Now)
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "ctxsim: note: %s\n", n)
	}
	e.importCache = c.Imports
	e.atExit = append(e.atExit, func() {
		if e.importStats != nil && c.Imports != nil {
			*e.importStats = c.Imports.Stats()
		}
		if e.solveStats != nil && c.Solved != nil {
			*e.solveStats = c.Solved.Stats()
		}
		for _, w := range c.Close() {
			fmt.Fprintf(e.stderr, "ctxsim: warning: %s\n", w)
		}
	})
}

package harness

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/sim/hindsight/hindcache"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// Caches are the caches under one directory that are keyed by the running
// executable's Go build (filecache.BuildID), so a rebuilt ctxsim never
// serves what an older one computed: Imports (imports/, what the importers
// read from each log) and Solved (hindsight/, each solved hindsight
// optimum). Either is nil when it is not open.
type Caches struct {
	Imports *filecache.Cache
	Solved  *hindcache.Cache
}

// OpenCaches opens the caches in dir and gives st the hindsight cache
// when st computes the optimum (st.SolveStore). now dates hits, so the
// least recently used entries go first. notes say what could not be
// opened; the run goes on without it.
func OpenCaches(dir string, st *experiment.Setup, now func() time.Time) (c *Caches, notes []string) {
	c = &Caches{}
	build, err := filecache.ExecutableBuild()
	if err != nil {
		return c, []string{fmt.Sprintf("no import or hindsight cache: %v", err)}
	}
	if c.Imports, err = filecache.Open(filepath.Join(dir, "imports"), filecache.Options{Build: build, Now: now}); err != nil {
		notes = append(notes, fmt.Sprintf("no import cache: %v", err))
	}
	if st.Hindsight {
		c.Solved = hindcache.Open(filepath.Join(dir, "hindsight"), hindcache.Options{Build: build, Now: now})
		st.SolveStore = c.Solved
	}
	return c, notes
}

// Close flushes the caches (each keeps its size bound) and returns their
// problems, in order: a cache's warnings never fail a run.
func (c *Caches) Close() []string {
	var out []string
	if c.Imports != nil {
		if err := c.Imports.Flush(); err != nil {
			out = append(out, fmt.Sprintf("import cache: %v", err))
		}
		out = append(out, c.Imports.Warnings()...)
	}
	if c.Solved != nil {
		if err := c.Solved.Flush(); err != nil {
			out = append(out, fmt.Sprintf("hindsight cache: %v", err))
		}
		out = append(out, c.Solved.Warnings()...)
	}
	return out
}

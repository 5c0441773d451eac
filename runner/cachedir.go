package runner

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/sim/hindsight/hindcache"
	"github.com/ctxsim/ctxsim/traces/filecache"
)

// A CacheDir is the caches a runner keeps under one directory (ctxsim/ in
// the user's cache directory), so that a second run over the same logs
// tokenizes, decodes and solves nothing: token counts (one file per
// encoding, policies/estimate/tokcache), what the importers read from
// each log (imports/, traces/filecache) and each solved hindsight optimum
// (hindsight/, sim/hindsight/hindcache). The last two are keyed by the
// running executable's Go build (filecache.BuildID), so a rebuilt ctxsim
// never serves what an older one computed. Imports and Solved are nil
// when not open; every cache's problem is a warning, never a failed run.
type CacheDir struct {
	Imports *filecache.Cache
	Solved  *hindcache.Cache
	tokens  func() []string
}

// CacheOptions say how OpenCacheDir opens a directory's caches.
type CacheOptions struct {
	// Now dates hits, so the least recently used entries go first.
	Now func() time.Time
	// Tokenizer, when set, wraps the tokenizer rn counts with: the seam
	// tests count tokenizer calls through (it applies with no directory
	// too).
	Tokenizer func(estimate.Tokenizer) estimate.Tokenizer
}

// OpenCacheDir opens the caches in dir for rn ("" opens none): its token
// counts back rn.Tokens (OwnTokens), its imports serve Workload.Cache, and
// when rn computes the hindsight optimum its solved optima are
// rn.SolveStore. notes say what could not be opened; the run goes on
// without it.
func OpenCacheDir(rn *Runner, dir string, o CacheOptions) (c *CacheDir, notes []string, err error) {
	c = &CacheDir{}
	if dir != "" {
		notes = c.openBuilt(rn, dir, o.Now)
	}
	if dir == "" && o.Tokenizer == nil {
		return c, notes, nil // the process-wide memo, no store
	}
	c.tokens, err = rn.OwnTokens(dir, o.Tokenizer)
	return c, notes, err
}

// openBuilt opens the caches of dir keyed by this build.
func (c *CacheDir) openBuilt(rn *Runner, dir string, now func() time.Time) (notes []string) {
	build, err := filecache.ExecutableBuild()
	if err != nil {
		return []string{fmt.Sprintf("no import or hindsight cache: %v", err)}
	}
	if c.Imports, err = filecache.Open(filepath.Join(dir, "imports"), filecache.Options{Build: build, Now: now}); err != nil {
		notes = append(notes, fmt.Sprintf("no import cache: %v", err))
	}
	if rn.Hindsight {
		c.Solved = hindcache.Open(filepath.Join(dir, "hindsight"), hindcache.Options{Build: build, Now: now})
		rn.SolveStore = c.Solved
	}
	return notes
}

// Close flushes the caches (each keeps its size bound) and returns their
// problems, in order: the imports', the hindsight optima's, the token
// counts'.
func (c *CacheDir) Close() []string {
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
	if c.tokens != nil {
		out = append(out, c.tokens()...)
	}
	return out
}

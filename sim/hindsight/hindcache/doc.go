// Package hindcache keeps solved hindsight optima across runs, in a
// directory (ctxsim's cache directory's hindsight/): a second whatif over
// the same logs replays them but solves nothing, which was most of a warm
// run's time with the optimum (the search is the costly part; the replay
// that tapes the requests is not).
//
// An entry is one hindsight.Result under its hindsight.Key (a SHA-256 of
// the tape, the options and the caller's grouping) and the build of the
// program that solved it: another build's entry is a miss, so a changed
// solver never serves an old answer. A file is the magic, the build, the
// key, the result (hindsight.Result.MarshalBinary) and an xxhash of all of
// it, written atomically (internal/atomicfile); one that does not check is
// a warning and a miss, never a wrong result. Flush removes the least
// recently used entries beyond MaxBytes.
//
//	c := hindcache.Open(dir, hindcache.Options{Build: id, Now: time.Now})
//	rn.SolveStore = c // a runner.Runner
//	... // run
//	err := c.Flush(); warnings := c.Warnings()
package hindcache

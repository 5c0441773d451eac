// Package shard splits a run of ctxsim over N machines and puts the pieces
// back together. It is a leaf: it knows work units, manifests and files,
// not what a run computes (package runner plans and runs the cells; usage
// splits a cost scan by project).
//
// A run is made of work units: a tenant (a root session with its subagents
// and every session sharing its provider cache) for compare and fidelity,
// a (policy, tenant) cell for sweep and whatif, a project directory for
// cost. A Spec "K/N" owns the units whose identity hashes to K (jump
// consistent hashing of the identity's xxhash): the assignment depends on
// the identity alone, never on the order or number of units, so adding
// logs moves no existing unit, and going from N to N+1 shards moves about
// 1/(N+1) of them.
//
// Each shard writes its own output directory (WriteDir): its entries, one
// a finished cell with its position in the unsharded run, its runs and how
// many records.jsonl lines it wrote (shard-cells.jsonl), and then a
// Manifest (inputs' hashes, identity flags, seed, shard, version), which
// marks the shard complete. Merge checks that the manifests agree and
// cover every shard exactly once, naming any shard that is missing,
// duplicated or from another run, and returns the entries in the unsharded
// run's order with their records.jsonl lines byte for byte, from which the
// command writes exactly what the unsharded run writes.
//
// # Typical steps
//
//	sp, err := shard.Parse("2/8")               // from the command line
//	if sp.Owns(unitID) { ... run it ... }
//	shard.WriteDir(dir, sp, entries, m, warnings) // beside summary.json
//	merged, err := shard.Merge(ctx, dirs)        // ctxsim merge
//
// Nothing here reads flags or the clock; the command passes them in.
package shard

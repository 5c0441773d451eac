// Package shard splits a run of ctxsim over N machines and puts the pieces
// back together.
//
// A run is made of work units: a tenant (a root session with its subagents
// and every session sharing its provider cache) for compare, whatif and
// fidelity, a (grid point, tenant) cell for sweep, a session for cost. A
// Spec "K/N" owns the units whose identity hashes to K (jump consistent
// hashing of the identity's xxhash): the assignment depends on the identity
// alone, never on the order or number of units, so adding logs moves no
// existing unit, and going from N to N+1 shards moves about 1/(N+1) of them.
//
// Each shard writes its own output directory with a Manifest (inputs'
// hashes, identity flags, seed, shard, version) and a cells.jsonl index
// (each finished cell's position in the unsharded run, its runs and how many
// records.jsonl lines it wrote). Merge checks that the manifests agree and
// cover every shard exactly once, naming any shard that is missing,
// duplicated or from another run, and returns the cells in the unsharded
// run's order with their records.jsonl lines byte for byte, from which the
// command writes exactly what the unsharded run writes.
//
// # Typical steps
//
//	sp, err := shard.Parse("2/8")          // from --shard
//	if sp.Owns(unitID) { ... run it ... }
//	shard.WriteManifest(dir, m)            // beside summary.json
//	merged, err := shard.Merge(dirs)       // ctxsim merge
//
// Open reads a shard's sessions: every native trace by its header only,
// then Fill reads in full those of the tenants the shard owns, so a shard's
// memory is its own tenants', not the fleet's.
//
// A sharded replay runs through a Plan: NewPlan keeps the cells the shard
// owns (TenantUnit or CellUnit names a cell's unit), each with its place in
// the unsharded run; Plan.Run replays them (experiment.Setup.Each) and
// keeps each finished cell as a part; WritePart writes the parts and then
// the manifest (NewManifest, with Inputs' hashes), which marks the shard
// complete. Labels and Merged.Outputs turn merged cells back into the
// run's experiment.Outputs. A sharded cost run splits Claude Code log
// trees by project directory instead: ScanCostShard scans the projects a
// shard owns (CostProjects, ScanCost), MergeCost reads the merged parts
// back, and both return the sessions and warnings in the one-process
// scan's order; CostRender is the grouping the manifest keeps, and
// Merged.CheckPrices checks that merge prices with the shards' --prices
// file.
//
// Nothing here reads flags or the clock; the command passes them in.
package shard

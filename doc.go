// Package ctxsim holds what belongs to the module as a whole: the embedded
// default workload, the recorded Claude Code sessions under
// testdata/claude-code (MIT, see LICENSE-spotter there), which "ctxsim
// compare" replays when given no traces; and the Build of the running
// binary (its version line, and the identity a shard's manifest records).
// The simulator itself lives in the subpackages; see DESIGN.md and
// README.md.
package ctxsim

// Package ctxsim holds the embedded default workload: the recorded Claude
// Code sessions under testdata/claude-code (MIT, see LICENSE-spotter there),
// which "ctxsim compare" replays when given no traces. The simulator itself
// lives in the subpackages; see DESIGN.md and README.md.
package ctxsim

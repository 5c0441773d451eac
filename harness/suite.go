package harness

import (
	"context"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces"
)

// SuitePerProfile is how many sessions of each synthetic profile the
// embedded suite holds when ctxsim compare and check run it with no
// arguments.
const SuitePerProfile = 2

// Suite replays sessions, the embedded suite (Load of a Workload naming
// neither paths nor profiles, SuitePerProfile sessions of each), under
// every preset and the recorded policy (experiment.DefaultSpecs), as
// ctxsim compare does with no arguments: the results ctxsim check compares
// with its baseline (report.Check). Cells that failed come with the
// others' results and a *experiment.CellsFailed.
func Suite(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, o Options) (report.Results, error) {
	specs, err := experiment.DefaultSpecs(nil)
	if err != nil {
		return report.Results{}, err
	}
	rp, err := Compare(ctx, st, sessions, specs, o)
	if Stopped(err) {
		return report.Results{}, err
	}
	return report.Results{Runs: rp.Runs}, err
}

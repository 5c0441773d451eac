package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// ErrNoSessions is Run's error for no sessions at all.
var ErrNoSessions = errors.New("no sessions to replay")

// Run replays sessions as one tenant (it sets every session's Tenant to
// "run") under one policy, as ctxsim run does: name with sets applied
// (experiment.ResolvePolicies), or when name is "" the recorded policy if
// the sessions carry recorded usage, else hermes-default. It keeps the
// records, and returns the cell's result with the replay (its hindsight
// tape, when Setup.Hindsight found one). A policy that needs recorded usage
// the sessions lack is an *experiment.SpecError. Any error, the cell's
// included, comes with no results: there is only the one cell.
func Run(ctx context.Context, st *experiment.Setup, sessions []*traces.Session, name string, sets []string, o Options) (*Replay, *experiment.Result, error) {
	if len(sessions) == 0 {
		return nil, nil, ErrNoSessions
	}
	for _, s := range sessions {
		s.Tenant = "run"
	}
	g := experiment.Tenants(sessions)[0]
	if name == "" {
		name = "hermes-default"
		if g.HasRecorded() {
			name = sim.RecordedName
		}
	}
	specs, err := experiment.ResolvePolicies([]string{name}, sets)
	if err != nil {
		return nil, nil, err
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells([]experiment.Tenant{g}, specs)
	if err != nil {
		return nil, nil, err
	}
	if len(cells) == 0 {
		return nil, nil, &experiment.SpecError{Msg: fmt.Sprintf("policy %s needs a trace with recorded usage", specs[0].Name)}
	}
	defer o.begin(len(cells))()
	rp := &Replay{Policies: experiment.SpecNames(specs), Labels: experiment.Labels(cells), Cells: cells, PolicyWarnings: specs[0].Warnings}
	var res *experiment.Result
	err = st.Each(ctx, cells, 1, nil, o.Done, o.Failed, func(c *experiment.Cell) {
		rp.Runs, rp.Records, res = c.Result.Runs, c.Result.Records, c.Result
	})
	if err != nil {
		return nil, nil, err
	}
	return rp, res, nil
}

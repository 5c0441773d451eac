package runner

import (
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/report/progress"

	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// A Progress hears a command's work in sessions as it is done: the
// session replays and the sessions' hindsight optima a run plans, and each
// as it ends (report/progress.Meter is one). Its methods are called from
// any goroutine; nothing it hears changes a result.
type Progress interface {
	Plan(replays, solves int)
	Replayed(n int)
	Solved(n int)
}

// Sessions is o showing its run's progress in sessions on m
// (report/progress) instead of the cells' bar; o itself when m is nil
// (no terminal, or JSON output).
func (o Options) Sessions(m *progress.Meter) Options {
	if m != nil {
		o.Progress, o.Start, o.End = m, nil, m.Finish
	}
	return o
}

// plan tells p the session replays and optima p's cells that have not run
// will do: a cell replays its tenant's sessions (a policy other than the
// recorded ones leaves out the recorded harness's compaction calls), and
// solves each root's optimum when its policy gets one.
func (rn *Runner) plan(cells []*Cell, p Progress) {
	replays, solves := 0, 0
	for _, c := range cells {
		if c.Result != nil {
			continue
		}
		for _, s := range c.Tenant.Sessions {
			if c.sim.Recorded || s.Format != claudecode.FormatCompaction {
				replays++
			}
		}
		if rn.hindsightFor(c.sim.Name) && !rn.ClearToolUses && rn.ProviderFor(c.Tenant) == "anthropic" {
			solves += len(c.Tenant.Roots)
		}
	}
	p.Plan(replays, solves)
}

// solvedRoots tells p each root of t as the solve of calls passes the
// root's last call (hindsight.Options.Progress), and, through the func it
// returns, the rest once the optimum is known (a stored one solves
// nothing).
func solvedRoots(t Tenant, calls []hindsight.Call, p Progress) (progress func(calls int), end func()) {
	rootOf := t.rootOf()
	last := map[string]int{}
	for i := range calls {
		if r, ok := rootOf[strings.TrimSuffix(calls[i].Key, "/compaction")]; ok && !calls[i].Fixed {
			last[r] = i
		}
	}
	ends := make([]int, 0, len(last))
	for _, i := range last {
		ends = append(ends, i)
	}
	slices.Sort(ends)
	told := 0
	progress = func(done int) {
		n := 0
		for told+n < len(ends) && ends[told+n] < done {
			n++
		}
		if n > 0 {
			told += n
			p.Solved(n)
		}
	}
	end = func() {
		if n := len(t.Roots) - told; n > 0 {
			told = len(t.Roots)
			p.Solved(n)
		}
	}
	return progress, end
}

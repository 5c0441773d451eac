package runner_test

import (
	"context"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/report/progress"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/shard"
)

// counts is a Progress that keeps what it heard.
type counts struct {
	mu                                sync.Mutex
	replays, solves, replayed, solved int
	solvedCalls, plans                int
}

func (c *counts) Plan(r, s int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replays, c.solves, c.plans = c.replays+r, c.solves+s, c.plans+1
}

func (c *counts) Replayed(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replayed += n
}

func (c *counts) Solved(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.solved += n
	c.solvedCalls++
}

// whatif's progress counts sessions: every session of the account is
// replayed once per policy (the baseline included), every root's optimum
// is solved once, as the solve passes it, not all at the end; and the
// results are those of a run that reports nothing.
func TestWhatifProgress(t *testing.T) {
	specs, err := runner.WhatifPolicies([]string{"ttl-1h", "ttl-5m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ss := recorded(t)
	roots := 0
	for _, s := range ss {
		if s.Parent == "" {
			roots++
		}
	}
	var with *runner.Replay
	for _, workers := range []int{1, 2} {
		var c counts
		rn := setup(t)
		rn.Hindsight = true
		res, err := runner.Whatif(context.Background(), rn, ss, specs, runner.Options{Workers: workers, Progress: &c})
		if err != nil {
			t.Fatal(err)
		}
		if c.plans != 1 || c.replays != 3*len(ss) || c.replayed != c.replays || c.solves != roots || c.solved != roots {
			t.Errorf("%d workers: planned %d replays and %d solves (in %d plans), heard %d and %d; want %d sessions × 3 cells and %d roots",
				workers, c.replays, c.solves, c.plans, c.replayed, c.solved, len(ss), roots)
		}
		// One worker solves the pieces in order, each reported as it
		// is passed; with helpers a later piece may finish first, and
		// a prefix of the tape is reported once the pieces before it
		// are done too (hindsight.Options.Progress), so in one step.
		if workers == 1 && c.solvedCalls < 2 {
			t.Errorf("the optima were reported in %d step(s); the sessions of different days are pieces solved one by one", c.solvedCalls)
		}
		if workers == 2 {
			with = res
		}
	}
	rn := setup(t)
	rn.Hindsight = true
	without, err := runner.Whatif(context.Background(), rn, recorded(t), specs, runner.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(with.Runs, without.Runs) {
		t.Error("the runs differ with a Progress")
	}
}

// Sessions puts a meter in place of the cells' bar, and a nil one leaves
// the options alone.
func TestOptionsSessions(t *testing.T) {
	o := runner.Console(io.Discard, 2, shard.Spec{})
	if got := o.Sessions(nil); got.Progress != nil || got.Start == nil || got.End == nil {
		t.Errorf("a nil meter changed the options: %+v", got)
	}
	m := progress.New(io.Discard, func() time.Time { return time.Time{} })
	if got := o.Sessions(m); got.Progress != runner.Progress(m) || got.Start != nil || got.End == nil || got.Workers != 2 {
		t.Errorf("with a meter: %+v", got)
	}
}

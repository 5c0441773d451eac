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
	var c counts
	rn := setup(t)
	rn.Hindsight = true
	with, err := runner.Whatif(context.Background(), rn, ss, specs, runner.Options{Workers: 2, Progress: &c})
	if err != nil {
		t.Fatal(err)
	}
	if c.plans != 1 || c.replays != 3*len(ss) || c.replayed != c.replays || c.solves != roots || c.solved != roots {
		t.Errorf("planned %d replays and %d solves (in %d plans), heard %d and %d; want %d sessions × 3 cells and %d roots",
			c.replays, c.solves, c.plans, c.replayed, c.solved, len(ss), roots)
	}
	if c.solvedCalls < 2 {
		t.Errorf("the optima were reported in %d step(s); the sessions of different days are pieces solved one by one", c.solvedCalls)
	}
	rn = setup(t)
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

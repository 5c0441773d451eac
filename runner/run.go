package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ctxsim/ctxsim/sim/hindsight"
)

// RunOptions say how Run replays a plan's cells.
type RunOptions struct {
	// Workers replay cells in parallel (0: one per core); the output is
	// the same for any number.
	Workers int
	// Journal, when set, is appended each cell as soon as it finishes,
	// whatever order that is (a sweep's, to resume from). A write that
	// fails stops the run: results that cannot be saved are not computed.
	Journal *Journal
	// Records keeps each cell's records once emit has seen it; otherwise
	// they go then, so a run's memory does not grow by every cell's.
	Records bool
	// Done, when set, sees every finished cell (a progress bar), Failed
	// each that failed (c.Err), in cell order.
	Done, Failed func(*Cell)
	// Progress, when set, is told the session replays and optima the
	// cells will do, and hears each as it ends.
	Progress Progress
}

// Run replays p's cells on a worker pool and hands each that ran to emit
// in cell order, whatever order they finish in, so output is
// byte-identical for any number of workers; emit runs on the caller's
// goroutine. A cell whose Result is already set (resumed from a journal)
// is not replayed again. A sharded plan keeps each cell emit saw as an
// entry of the shard's part (Plan.Entries).
//
// Run returns *CellsFailed when some cells failed and the rest ran, their
// results standing; any other error stopped it (Stopped): ctx cancelled,
// a journal or an entry that could not be written.
func (r *Runner) Run(ctx context.Context, p *Plan, o RunOptions, emit func(*Cell)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Progress != nil {
		r.plan(p.Cells, o.Progress)
		r.progress = o.Progress
		defer func() { r.progress = nil }()
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r.crew = hindsight.NewCrew(workers - 1)
	defer func() { r.crew = nil }()
	var mu sync.Mutex
	var fatal error
	stop := func(err error) {
		mu.Lock()
		if fatal == nil {
			fatal = err
		}
		mu.Unlock()
		cancel()
	}
	cells := p.Cells
	do := func(ctx context.Context, i int) {
		c := cells[i]
		if c.Result != nil {
			return
		}
		res, err := r.runCell(ctx, c)
		if err != nil {
			c.Err = err
			return
		}
		c.Result = res
		if o.Journal != nil {
			if err := o.Journal.Append(c, c.Result.Runs); err != nil {
				c.Result, c.Err = nil, err
				stop(err)
			}
		}
	}
	failed := 0
	var entryErr error
	pool(ctx, len(cells), o.Workers, do, func(i int) bool {
		if ctx.Err() != nil {
			return false
		}
		c := cells[i]
		if o.Done != nil {
			o.Done(c)
		}
		if c.Err != nil {
			failed++
			if o.Failed != nil {
				o.Failed(c)
			}
			return true
		}
		emit(c)
		if entryErr == nil {
			entryErr = p.add(c, r.Prices, o.Records)
		}
		if !o.Records {
			c.Result.Records = nil
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case fatal != nil:
		return fatal
	case ctx.Err() != nil:
		return ctx.Err()
	case entryErr != nil:
		return entryErr
	case failed > 0:
		return &CellsFailed{N: failed, Of: len(cells)}
	}
	return nil
}

// CellsFailed is Run's error when some cells failed and the rest ran.
type CellsFailed struct{ N, Of int }

func (e *CellsFailed) Error() string {
	return fmt.Sprintf("%d of %d cells failed (see above)", e.N, e.Of)
}

// Stopped reports whether err, from a run here, stopped it (ctx
// cancelled, a journal or an entry that could not be written) rather than
// counting failed cells (*CellsFailed), whose run's results stand.
func Stopped(err error) bool {
	var failed *CellsFailed
	return err != nil && !errors.As(err, &failed)
}

package experiment

import (
	"context"
	"fmt"
)

// Each is Sweep that goes on past failed cells: emit sees, in cell order,
// every cell that ran; failed sees each cell that failed (c.Err), which
// the others' results do not wait for. done, when set, sees every
// finished cell (a progress bar). It returns *CellsFailed when some cells
// failed and the rest ran, and any other error (ctx cancelled, a journal
// write failed) when the run stopped.
func (st *Setup) Each(ctx context.Context, cells []*Cell, workers int, j *Journal, done, failed, emit func(*Cell)) error {
	n := 0
	err := st.Sweep(ctx, cells, workers, j, func(c *Cell) error {
		if done != nil {
			done(c)
		}
		if c.Err != nil {
			n++
			if failed != nil {
				failed(c)
			}
			return nil
		}
		emit(c)
		return nil
	})
	if err == nil && n > 0 {
		err = &CellsFailed{N: n, Of: len(cells)}
	}
	return err
}

// CellsFailed is Each's error when some cells failed and the rest ran.
type CellsFailed struct{ N, Of int }

func (e *CellsFailed) Error() string {
	return fmt.Sprintf("%d of %d cells failed (see above)", e.N, e.Of)
}

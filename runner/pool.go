package runner

import (
	"context"
	"runtime"
	"sync"
)

// pool runs do(ctx, i) for i in [0, n) on workers goroutines (0: one per
// core) and calls emit(i) in index order, whatever order they finish in,
// on the caller's goroutine. Once ctx is done no new index starts (do is
// not called for it, emit still is, so the caller sees every index); when
// emit returns false no further index is emitted. pool returns when every
// started do has returned: no goroutine outlives it.
func pool(ctx context.Context, n, workers int, do func(context.Context, int), emit func(int) bool) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	finished := make(chan int, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					do(ctx, i)
				}
				finished <- i
			}
		}()
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		close(finished)
	}()
	pending := make([]bool, n)
	want, emitting := 0, true
	for i := range finished {
		pending[i] = true
		for emitting && want < n && pending[want] {
			emitting = emit(want)
			want++
		}
	}
}

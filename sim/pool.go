package sim

import (
	"runtime"
	"sync"
)

// A Job is one cell of a comparison: some sessions of one tenant replayed
// under one policy.
type Job struct {
	// Key names the cell in output ("trace/policy"); it must be unique.
	Key string
	// Do runs the cell. It must not share mutable state with other jobs.
	Do func() (any, error)
}

// A Done is a finished job.
type Done struct {
	Index int
	Key   string
	Value any
	Err   error
}

// Pool runs jobs on workers goroutines (0: one per core) and calls emit for
// each finished job in job order, whatever order they finish in, so output
// is byte-identical for any number of workers. emit runs on the caller's
// goroutine.
func Pool(jobs []Job, workers int, emit func(Done)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make(chan Done, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				v, err := jobs[i].Do()
				results <- Done{Index: i, Key: jobs[i].Key, Value: v, Err: err}
			}
		}()
	}
	go func() {
		for i := range jobs {
			next <- i
		}
		close(next)
		wg.Wait()
		close(results)
	}()
	pending := map[int]Done{}
	want := 0
	for d := range results {
		pending[d.Index] = d
		for {
			x, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			emit(x)
			want++
		}
	}
}

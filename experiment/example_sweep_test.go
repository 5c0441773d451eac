package experiment_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// A sweep from Go: a grid over one preset, each finished cell journaled
// to an io.Writer (a file, for a sweep that can resume), cancellable
// through ctx, and the cheapest comparable grid point.
func ExampleSetup_Sweep() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // cancel() stops the sweep: no new cell starts

	sessions, err := synth.Generate("cron", 1, 1, synth.Options{})
	if err != nil {
		log.Fatal(err)
	}
	grid, err := experiment.NewGrid("hermes-default", nil, []string{"prompt_caching.cache_ttl=5m,1h"})
	if err != nil {
		log.Fatal(err)
	}
	points := grid.Points
	st, err := experiment.NewSetup(nil, "auto", 1)
	if err != nil {
		log.Fatal(err)
	}
	st.Memo.Warm(sessions)
	cells, err := st.Cells(experiment.Tenants(sessions), points)
	if err != nil {
		log.Fatal(err)
	}
	var journal bytes.Buffer
	var runs []report.RunSummary
	err = st.Sweep(ctx, cells, 0, experiment.NewJournal(&journal, "cells.jsonl"), func(c *experiment.Cell) error {
		if c.Err != nil {
			return c.Err
		}
		runs = append(runs, c.Result.Runs...)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	p := report.NewPivot(runs,
		func(r report.RunSummary) string { return r.Policy },
		func(report.RunSummary) string { return "total" })
	for _, pt := range experiment.SpecNames(points) {
		fmt.Printf("%s $%.4f\n", pt, p.At(pt, "total").CostUSD)
	}
	fmt.Println("cheapest:", p.BestIn("total", p.Rows))
	fmt.Println("journal lines:", bytes.Count(journal.Bytes(), []byte("\n")))
	// Output:
	// hermes-default[cache_ttl=5m] $0.0149
	// hermes-default[cache_ttl=1h] $0.0218
	// cheapest: hermes-default[cache_ttl=5m]
	// journal lines: 2
}

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// A sweep from Go: a grid over one preset, each finished cell journaled
// to an io.Writer (a file, for a sweep that can resume), cancellable
// through ctx, and the cheapest comparable grid point.
func ExampleRunner_Run_journal() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // cancel() stops the sweep: no new cell starts

	sessions, err := synth.Generate(context.Background(), "cron", 1, 1, synth.Options{})
	if err != nil {
		log.Fatal(err)
	}
	grid, err := runner.NewGrid("hermes-default", nil, []string{"prompt_caching.cache_ttl=5m,1h"}, 0)
	if err != nil {
		log.Fatal(err)
	}
	points := grid.Points
	rn, err := runner.New(nil, "auto", 1)
	if err != nil {
		log.Fatal(err)
	}
	rn.Tokens.Warm(sessions)
	plan, err := rn.Plan(ctx, runner.Tenants(sessions), points, runner.PlanOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var journal bytes.Buffer
	var runs []results.RunSummary
	err = rn.Run(ctx, plan, runner.RunOptions{Journal: runner.NewJournal(&journal, "cells.jsonl")}, func(c *runner.Cell) {
		runs = append(runs, c.Result.Runs...)
	})
	if err != nil {
		log.Fatal(err)
	}
	p := results.NewPivot(runs,
		func(r results.RunSummary) string { return r.Policy },
		func(results.RunSummary) string { return "total" })
	for _, pt := range runner.PolicyNames(points) {
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

package runner_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// A Go program comparing two policies on a directory of Claude Code logs:
// the log's own behaviour replayed, and the same sessions with every cache
// breakpoint on the 1h tier. Ctrl-C cancels the replays.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	sessions, _, err := formats.Open(ctx, []string{"../testdata/claude-code"}, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	rn, err := runner.New(nil, "auto", 1) // embedded rate card, seed 1
	if err != nil {
		log.Fatal(err)
	}
	rn.Tokens.Warm(sessions) // tokenize every distinct block once, on all cores

	ttl1h, _ := runner.LookupVariant("ttl-1h")
	specs := []runner.Policy{runner.RecordedObserved(), ttl1h.Policy()}
	plan, err := rn.Plan(ctx, runner.Tenants(sessions), specs, runner.PlanOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var runs []results.RunSummary
	err = rn.Run(ctx, plan, runner.RunOptions{}, func(c *runner.Cell) {
		runs = append(runs, c.Result.Runs...)
	})
	if err != nil {
		log.Fatal(err)
	}

	p := results.NewPivot(runs,
		func(r results.RunSummary) string { return r.Policy },
		func(r results.RunSummary) string { return "all sessions" })
	for _, pol := range p.Rows {
		t := p.At(pol, "all sessions")
		fmt.Printf("%-17s %d sessions  $%.2f  hit rate %.1f%%\n", pol, t.Runs, t.CostUSD, 100*t.HitRate())
	}
	fmt.Println("cheapest:", p.BestIn("all sessions", p.Rows))
	// Output:
	// recorded-observed 4 sessions  $10.98  hit rate 95.5%
	// ttl-1h            4 sessions  $12.18  hit rate 96.1%
	// cheapest: recorded-observed
}

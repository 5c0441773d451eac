package pricing_test

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

func Example() {
	card := pricing.Default()
	p, err := card.Lookup("claude-opus-4-6[1m]")
	if err != nil {
		panic(err)
	}
	u := traces.Usage{Input: 177, CacheWrite5m: 479537, CacheRead: 11618567, Output: 28755}
	fmt.Printf("%s: $%.2f, hit rate %.1f%%\n", p.Model, p.Cost(u), 100*u.HitRate())

	// A LiteLLM price file extends the card.
	err = card.LoadLiteLLM(strings.NewReader(`{"my-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6}}`), "prices.json")
	if err != nil {
		panic(err)
	}
	m, _ := card.Lookup("my-model")
	fmt.Printf("%s: input $%g, 5m write $%g, read $%g per MTok\n", m.Model, m.Input, m.CacheWrite5m, m.CacheRead)
	// Output:
	// claude-opus-4-6: $9.53, hit rate 96.0%
	// my-model: input $1, 5m write $1, read $1 per MTok
}

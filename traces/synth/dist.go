package synth

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Fitted parameters. The package doc gives their provenance; fit_test.go
// recomputes the ones that come from testdata/claude-code.
var (
	// toolResultChars is the size in bytes of a content-bearing tool
	// result: ln-mean 5.78, ln-sd 2.52 over 207 results (median ~320 bytes,
	// p90 ~11K), capped at 30,000 as Claude Code truncates tool output.
	toolResultChars = lognormal{mu: 5.78, sigma: 2.52, min: 40, max: 30000}
	// toolRunMS is a tool's run time: ln-mean 5.44, ln-sd 2.91 ms over the
	// same results (median ~0.2 s, p90 ~9 s), capped at 10 minutes.
	toolRunMS = lognormal{mu: 5.44, sigma: 2.91, min: 5, max: 600_000}
	// callsPerTurn is the number of model calls in a turn: ln-mean 1.73,
	// ln-sd 1.42 over 11 human turns (1 to 76 calls).
	callsPerTurn = lognormal{mu: 1.73, sigma: 1.42, min: 1, max: 80}
	// thinkSeconds is the gap between a reply and the person's next message,
	// fitted to claude-code#74075 (27% of 1,967 replies after 5 min, 10%
	// after 15 min): median ~110 s. The shared sessions agree (80-115 s).
	thinkSeconds = lognormal{mu: 4.70, sigma: 1.64, min: 3, max: 4 * 3600}
	// textChars is the size of an assistant's text block between tool
	// calls: ln-mean 4.41, ln-sd 1.50 over 110 text blocks (median ~80).
	textChars = lognormal{mu: 4.41, sigma: 1.50, min: 8, max: 4000}
)

// A lognormal draws from a log-normal distribution, resampled into
// [min, max] (up to 8 tries, then clamped, so a draw costs bounded work).
// Truncating the tail biases means downwards a little against the fitted
// distribution; the caps are where real harnesses cut off anyway.
type lognormal struct{ mu, sigma, min, max float64 }

func (d lognormal) draw(r *rand.Rand) float64 {
	dist := distuv.LogNormal{Mu: d.mu, Sigma: d.sigma, Src: r}
	var x float64
	for range 8 {
		if x = dist.Rand(); x >= d.min && x <= d.max {
			return x
		}
	}
	return math.Min(math.Max(x, d.min), d.max)
}

func (d lognormal) with(mu, max float64) lognormal { d.mu, d.max = mu, max; return d }

func (d lognormal) int(r *rand.Rand) int { return int(math.Round(d.draw(r))) }

// poisson draws a Poisson count with mean lambda.
func poisson(r *rand.Rand, lambda float64) int {
	return int(distuv.Poisson{Lambda: lambda, Src: r}.Rand())
}

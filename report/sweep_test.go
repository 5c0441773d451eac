package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/results"
	"github.com/stretchr/testify/require"
)

// The sweep matrix once starred a cell whose calls overflowed the window
// (rejected, so unbilled, so cheapest) while the table above it excluded
// it. The cheapest comparable cell gets the star; the overflowed one a "!".
func TestSweepMatrixSkipsOverflow(t *testing.T) {
	axes := []results.Axis{
		{Key: "compression.threshold", Short: "threshold", Values: []string{"0.3", "0.9"}},
		{Key: "prompt_caching.cache_ttl", Short: "cache_ttl", Values: []string{"5m", "1h"}},
	}
	points := []string{"p[0.3,5m]", "p[0.3,1h]", "p[0.9,5m]", "p[0.9,1h]"} // grid order
	costs := []float64{0.50, 0.60, 0.05, 0.70}                             // 0.9/5m is cheapest: it overflowed
	var runs []results.RunSummary
	for i, p := range points {
		r := results.RunSummary{Trace: "t", Policy: p, CostUSD: costs[i]}
		if i == 2 {
			r.OverflowErrors = 4
		}
		runs = append(runs, r)
	}
	var b bytes.Buffer
	require.NoError(t, SweepMatrix(axes, points, runs).Table().Write(&b, Markdown))
	got := b.String()
	for _, want := range []string{"| 0.3 | 0.5000 * | 0.6000 |", "| 0.9 | 0.0500 ! | 0.7000 |", "! some calls overflowed"} {
		if !strings.Contains(got, want) {
			t.Errorf("matrix lacks %q:\n%s", want, got)
		}
	}
}

package report

import (
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/results"
)

func TestAxisCoords(t *testing.T) {
	for _, c := range []struct {
		values []string
		xs     []float64
		label  string
		ticks  []string
	}{
		{[]string{"0.25", "0.5", "0.75"}, []float64{0.25, 0.5, 0.75}, "k", nil},
		{[]string{"5m", "1h"}, []float64{5, 60}, "k (minutes)", nil},
		{[]string{"1", "2", "5", "10"}, []float64{0, 1, 2, 3}, "k", []string{"1", "2", "5", "10"}},
		{[]string{"1h", "5m"}, []float64{0, 1}, "k", []string{"1h", "5m"}},
		{[]string{"hermes", "none"}, []float64{0, 1}, "k", []string{"hermes", "none"}},
		{[]string{"7"}, []float64{7}, "k", nil},
	} {
		xs, label, ticks := axisCoords(results.Axis{Key: "k", Values: c.values})
		if !slices.Equal(xs, c.xs) || label != c.label || !slices.Equal(ticks, c.ticks) {
			t.Errorf("axisCoords(%q) = %v, %q, %q; want %v, %q, %q", c.values, xs, label, ticks, c.xs, c.label, c.ticks)
		}
	}
}

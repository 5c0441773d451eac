package report

import (
	"slices"
	"testing"
)

func TestAxisCoords(t *testing.T) {
	for _, c := range []struct {
		values []string
		xs     []float64
		label  string
	}{
		{[]string{"0.25", "0.5", "0.75"}, []float64{0.25, 0.5, 0.75}, "k"},
		{[]string{"5m", "1h"}, []float64{5, 60}, "k (minutes)"},
		{[]string{"1", "2", "5", "10"}, []float64{0, 1, 2, 3}, "k (0=1, 1=2, 2=5, 3=10)"},
		{[]string{"1h", "5m"}, []float64{0, 1}, "k (0=1h, 1=5m)"},
		{[]string{"hermes", "none"}, []float64{0, 1}, "k (0=hermes, 1=none)"},
		{[]string{"7"}, []float64{7}, "k"},
	} {
		xs, label := axisCoords(Axis{Key: "k", Values: c.values})
		if !slices.Equal(xs, c.xs) || label != c.label {
			t.Errorf("axisCoords(%q) = %v, %q; want %v, %q", c.values, xs, label, c.xs, c.label)
		}
	}
}

package numflag

import (
	"math"
	"testing"

	"github.com/spf13/pflag"
)

// TestNonFiniteRefused pins issue 27's numeric flags and settings that are
// not finite numbers: NaN, ±Inf and overflowing literals are refused
// whatever the range (NaN compares false with every bound), and so is a
// value outside it; a usage error names the flag.
func TestNonFiniteRefused(t *testing.T) {
	rate := Range{Lo: 0, Hi: 1, OpenHi: true}
	scale := Range{Lo: 0, Hi: math.Inf(1), OpenLo: true}
	for _, c := range []struct {
		r  Range
		in string
		ok bool
	}{
		{rate, "0", true}, {rate, "0.25", true}, {rate, "1", false}, {rate, "-0.1", false},
		{rate, "NaN", false}, {rate, "nan", false}, {scale, "Inf", false}, {scale, "+Inf", false},
		{scale, "1e999", false}, {scale, "-Inf", false}, {scale, "0", false}, {scale, "1e9", true}, {scale, "x", false},
	} {
		_, err := c.r.Parse(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%s.Parse(%q): %v", c.r.Allowed(), c.in, err)
		}
	}
	var n int
	if _, err := (IntRange{Lo: 1, Hi: 1000}).Parse("1_000"); err != nil {
		t.Error(err)
	}
	fs := pflag.NewFlagSet("gen", pflag.ContinueOnError)
	var length float64
	fs.Var(Float(&length, 1, scale), "length", "scale")
	fs.Var(Int(&n, 1, IntRange{Lo: 1, Hi: 1000}), "sessions", "n")
	if length != 1 || n != 1 {
		t.Errorf("defaults %v %v", length, n)
	}
	err := fs.Parse([]string{"--length", "NaN"})
	if err == nil || err.Error() != `invalid argument "NaN" for "--length" flag: want a number > 0, got "NaN"` {
		t.Errorf("--length NaN: %v", err)
	}
	if err := fs.Parse([]string{"--sessions", "0"}); err == nil {
		t.Error("--sessions 0 accepted")
	}
}

// Package numflag is the one parser of numbers from the command line and
// from policy settings: a value is a finite number in its range, or an
// error saying what is wanted ("want a number in (0, 1], got "NaN""),
// which the flag package reports naming the flag (a usage error, exit 2).
// strconv takes "NaN", "Inf" and "1e999" (+Inf) as numbers; a NaN compares
// false with every bound, so a range check alone lets it through (gen
// --length NaN looped forever, breakeven --growth Inf printed "+Inf%").
//
// Float and Int are flag values (pflag.Value: String, Set, Type) bound to
// a variable:
//
//	fs.Var(numflag.Float(&rate, 0, numflag.Range{Lo: 0, Hi: 1, OpenHi: true}), "provider-error-rate", "...")
package numflag

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A Range is the numbers a flag or setting accepts: [Lo, Hi], each end
// excluded when Open. An infinite Hi (math.Inf(1)) is no upper bound;
// infinity itself is never accepted.
type Range struct {
	Lo, Hi         float64
	OpenLo, OpenHi bool
}

// Ranges most flags take.
var (
	NonNegative = Range{Lo: 0, Hi: math.Inf(1)}
	Positive    = Range{Lo: 0, Hi: math.Inf(1), OpenLo: true}
	Fraction    = Range{Lo: 0, Hi: 1}
)

// Allowed says in words what r accepts: "a number in (0, 1]", "a number
// ≥ 0".
func (r Range) Allowed() string {
	lo, hi := "[", "]"
	if r.OpenLo {
		lo = "("
	}
	if r.OpenHi {
		hi = ")"
	}
	switch {
	case math.IsInf(r.Hi, 1) && math.IsInf(r.Lo, -1):
		return "a finite number"
	case math.IsInf(r.Hi, 1):
		if r.OpenLo {
			return fmt.Sprintf("a number > %g", r.Lo)
		}
		return fmt.Sprintf("a number ≥ %g", r.Lo)
	}
	return fmt.Sprintf("a number in %s%g, %g%s", lo, r.Lo, r.Hi, hi)
}

// Contains reports whether v is finite and in r.
func (r Range) Contains(v float64) bool {
	switch {
	case math.IsNaN(v), math.IsInf(v, 0):
		return false
	case v < r.Lo, r.OpenLo && v == r.Lo:
		return false
	case v > r.Hi, r.OpenHi && v == r.Hi:
		return false
	}
	return true
}

// Parse reads s as a number in r.
func (r Range) Parse(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !r.Contains(v) {
		return 0, fmt.Errorf("want %s, got %q", r.Allowed(), s)
	}
	return v, nil
}

// An IntRange is the integers a flag or setting accepts, [Lo, Hi].
type IntRange struct{ Lo, Hi int }

// Allowed says in words what r accepts.
func (r IntRange) Allowed() string {
	if r.Hi == math.MaxInt {
		return fmt.Sprintf("an integer ≥ %d", r.Lo)
	}
	return fmt.Sprintf("an integer in [%d, %d]", r.Lo, r.Hi)
}

// Parse reads s as an integer in r (digits may be grouped with _, as
// YAML and Go write them).
func (r IntRange) Parse(s string) (int, error) {
	v, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), "_", ""))
	if err != nil || v < r.Lo || v > r.Hi {
		return 0, fmt.Errorf("want %s, got %q", r.Allowed(), s)
	}
	return v, nil
}

// Float is a flag value holding *p, a number in r, def until set.
func Float(p *float64, def float64, r Range) *FloatValue {
	*p = def
	return &FloatValue{p: p, r: r}
}

// A FloatValue is a float flag bounded to a Range.
type FloatValue struct {
	p *float64
	r Range
}

func (f *FloatValue) String() string { return strconv.FormatFloat(*f.p, 'g', -1, 64) }
func (f *FloatValue) Type() string   { return "float64" } // shown as "float", as pflag's own

// Set implements pflag.Value.
func (f *FloatValue) Set(s string) error {
	v, err := f.r.Parse(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

// Int is a flag value holding *p, an integer in r, def until set.
func Int(p *int, def int, r IntRange) *IntValue {
	*p = def
	return &IntValue{p: p, r: r}
}

// An IntValue is an int flag bounded to an IntRange.
type IntValue struct {
	p *int
	r IntRange
}

func (f *IntValue) String() string { return strconv.Itoa(*f.p) }
func (f *IntValue) Type() string   { return "int" }

// Set implements pflag.Value.
func (f *IntValue) Set(s string) error {
	v, err := f.r.Parse(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

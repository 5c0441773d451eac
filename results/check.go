package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A ToleranceKind says how a tolerance is measured.
type ToleranceKind string

// Tolerance kinds: an absolute difference in the metric's unit, a relative
// one in percent of the baseline, or percentage points of a fraction.
const (
	Abs ToleranceKind = "abs"
	Rel ToleranceKind = "%"
	PP  ToleranceKind = "pp"
)

// A Tolerance is how far a metric may move before the check calls it a
// change. A PP tolerance holds a fraction (0.5pp is 0.005).
type Tolerance struct {
	Value float64       `json:"value"`
	Kind  ToleranceKind `json:"kind"`
}

func (t Tolerance) String() string {
	v := strconv.FormatFloat(t.Value, 'g', -1, 64)
	if t.Kind == Abs {
		return v
	}
	return v + string(t.Kind)
}

// A CheckMetric is one metric the check compares.
type CheckMetric struct {
	Name string
	// HigherIsBetter is true for the hit rate: a drop is a regression.
	HigherIsBetter bool
	// Fraction metrics are shown in percent and take pp tolerances; Count
	// metrics show an absolute delta.
	Fraction bool
	Count    bool
	Value    func(RunSummary) float64
}

// CheckMetrics are the metrics ctxsim check compares, in table order.
var CheckMetrics = []CheckMetric{
	{Name: "cache_hit_rate", HigherIsBetter: true, Fraction: true, Value: func(s RunSummary) float64 { return s.CacheHitRate }},
	{Name: "cost", Value: func(s RunSummary) float64 { return s.CostUSD }},
	{Name: "occupancy_max", Fraction: true, Value: func(s RunSummary) float64 { return s.Occupancy.Max }},
	{Name: "compactions", Count: true, Value: func(s RunSummary) float64 { return float64(s.Compactions.Total()) }},
	{Name: "latency_p95", Value: func(s RunSummary) float64 { return float64(s.LatencyMS.P95) }},
}

// DefaultTolerances is where a check starts: simulations are deterministic,
// so these only absorb deliberate, small model changes. Start from it and
// override single metrics so new metrics keep a default.
func DefaultTolerances() map[string]Tolerance {
	return map[string]Tolerance{
		"cache_hit_rate": {0.005, PP},
		"cost":           {1, Rel},
		"occupancy_max":  {0.01, PP},
		"compactions":    {0, Abs},
		"latency_p95":    {5, Rel},
	}
}

// ParseTolerances reads a list of ParseTolerance's specs into the map
// Check takes, metric by name (a later spec of a metric wins).
func ParseTolerances(specs []string) (map[string]Tolerance, error) {
	tol := map[string]Tolerance{}
	for _, s := range specs {
		name, t, err := ParseTolerance(s)
		if err != nil {
			return nil, err
		}
		tol[name] = t
	}
	return tol, nil
}

// ParseTolerance reads "metric=value[unit]", unit being pp, % or nothing
// (absolute). pp is only for fraction metrics.
func ParseTolerance(s string) (string, Tolerance, error) {
	name, val, ok := strings.Cut(s, "=")
	if !ok {
		return "", Tolerance{}, fmt.Errorf("tolerance %q: want metric=value, e.g. cost=1%% or cache_hit_rate=0.5pp", s)
	}
	name = strings.TrimSpace(name)
	m := FindMetric(name)
	if m == nil {
		return "", Tolerance{}, fmt.Errorf("tolerance %q: unknown metric %q (want one of %s)", s, name, metricNames())
	}
	t := Tolerance{Kind: Abs}
	val = strings.TrimSpace(val)
	switch {
	case strings.HasSuffix(val, "pp"):
		t.Kind, val = PP, strings.TrimSuffix(val, "pp")
	case strings.HasSuffix(val, "%"):
		t.Kind, val = Rel, strings.TrimSuffix(val, "%")
	}
	v, err := nonNegative.Parse(val)
	if err != nil {
		return "", Tolerance{}, fmt.Errorf("tolerance %q: %v", s, err)
	}
	if t.Kind == PP && !m.Fraction {
		return "", Tolerance{}, fmt.Errorf("tolerance %q: pp applies to rates; use %% or an absolute value for %s", s, name)
	}
	if t.Kind == PP {
		v /= 100
	}
	t.Value = v
	return name, t, nil
}

// FindMetric is the check metric named name, nil if none is.
func FindMetric(name string) *CheckMetric {
	for i := range CheckMetrics {
		if CheckMetrics[i].Name == name {
			return &CheckMetrics[i]
		}
	}
	return nil
}

func metricNames() string {
	var ns []string
	for _, m := range CheckMetrics {
		ns = append(ns, m.Name)
	}
	return strings.Join(ns, ", ")
}

// A Verdict is the outcome of one comparison.
type Verdict string

// Verdicts. Missing (a baseline cell the results lack) fails the check like
// a regression: a gate cannot vouch for what it did not measure.
const (
	Same      Verdict = "~"
	Regressed Verdict = "regressed"
	Improved  Verdict = "improved"
	Missing   Verdict = "missing"
	New       Verdict = "new"
)

// A CheckRow is one (cell, metric) comparison. For missing and new cells
// Metric is empty and only one side is set.
type CheckRow struct {
	Trace   string  `json:"trace"`
	Policy  string  `json:"policy"`
	Metric  string  `json:"metric,omitempty"`
	Old     float64 `json:"old"`
	New     float64 `json:"new"`
	Delta   string  `json:"delta,omitempty"`
	Verdict Verdict `json:"verdict"`
}

// A CheckReport is the result of comparing results with a baseline.
type CheckReport struct {
	Rows         []CheckRow           `json:"rows"`
	Tolerances   map[string]Tolerance `json:"tolerances"`
	Cells        int                  `json:"cells"`
	Regressions  int                  `json:"regressions"`
	Improvements int                  `json:"improvements"`
	MissingCells int                  `json:"missing"`
	NewCells     int                  `json:"new"`
	// Empty names the sides that hold no cells ("baseline", "results"): a
	// gate that compared nothing has vouched for nothing, so it fails.
	Empty []string `json:"empty,omitempty"`
}

// Failed reports whether the check should fail: a regression, a missing
// cell, or a side with no cells.
func (r *CheckReport) Failed() bool {
	return r.Regressions > 0 || r.MissingCells > 0 || len(r.Empty) > 0
}

// Check compares every (trace, policy) cell of cur with base. tol holds the
// tolerances by metric; metrics it lacks use DefaultTolerances. Rows follow
// the baseline's order, then new cells in cur's order.
func Check(base, cur Summary, tol map[string]Tolerance) CheckReport {
	full := DefaultTolerances()
	for k, v := range tol {
		full[k] = v
	}
	rep := CheckReport{Tolerances: full}
	if len(base.Runs) == 0 {
		rep.Empty = append(rep.Empty, "baseline")
	}
	if len(cur.Runs) == 0 {
		rep.Empty = append(rep.Empty, "results")
	}
	for _, b := range base.Runs {
		c := cur.Find(b.Trace, b.Policy)
		if c == nil {
			rep.Rows = append(rep.Rows, CheckRow{Trace: b.Trace, Policy: b.Policy, Verdict: Missing})
			rep.MissingCells++
			continue
		}
		rep.Cells++
		for _, m := range CheckMetrics {
			row := compareMetric(m, full[m.Name], m.Value(b), m.Value(*c))
			row.Trace, row.Policy = b.Trace, b.Policy
			switch row.Verdict {
			case Regressed:
				rep.Regressions++
			case Improved:
				rep.Improvements++
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	for _, c := range cur.Runs {
		if base.Find(c.Trace, c.Policy) == nil {
			rep.Rows = append(rep.Rows, CheckRow{Trace: c.Trace, Policy: c.Policy, Verdict: New})
			rep.NewCells++
		}
	}
	return rep
}

func compareMetric(m CheckMetric, t Tolerance, old, cur float64) CheckRow {
	row := CheckRow{Metric: m.Name, Old: old, New: cur, Verdict: Same}
	diff := cur - old
	var moved float64 // the change in the tolerance's unit
	switch {
	case m.Fraction:
		row.Delta = fmt.Sprintf("%+.2fpp", diff*100)
	case m.Count:
		row.Delta = fmt.Sprintf("%+g", diff)
	case old != 0:
		row.Delta = fmt.Sprintf("%+.2f%%", diff/math.Abs(old)*100)
	case diff != 0:
		row.Delta = "+∞%"
		if diff < 0 {
			row.Delta = "-∞%"
		}
	default:
		row.Delta = "+0.00%"
	}
	switch t.Kind {
	case Rel:
		switch {
		case old != 0:
			moved = math.Abs(diff/old) * 100
		case diff != 0:
			moved = math.Inf(1)
		}
	default:
		moved = math.Abs(diff)
	}
	// The epsilon keeps float noise (0.1+0.2) inside a zero tolerance.
	if moved <= t.Value+1e-9 {
		return row
	}
	if (diff > 0) == m.HigherIsBetter {
		row.Verdict = Improved
	} else {
		row.Verdict = Regressed
	}
	return row
}

// Summary is the one-line verdict.
func (r *CheckReport) Summary() string {
	verdict := "ok"
	if r.Failed() {
		verdict = "FAIL"
	}
	out := fmt.Sprintf("%s: %d cells compared, %d regressions, %d improvements, %d missing, %d new",
		verdict, r.Cells, r.Regressions, r.Improvements, r.MissingCells, r.NewCells)
	if len(r.Empty) > 0 {
		out += " (no cells in the " + strings.Join(r.Empty, " or the ") + ")"
	}
	return out
}

// Failures names the regressed metrics and missing cells, for an error
// message: "t1 · p1 cache_hit_rate, t2 · p2 (missing)".
func (r *CheckReport) Failures() []string {
	var out []string
	for _, e := range r.Empty {
		out = append(out, "the "+e+" holds no cells")
	}
	for _, row := range r.Rows {
		switch row.Verdict {
		case Regressed:
			out = append(out, row.Trace+" · "+row.Policy+" "+row.Metric)
		case Missing:
			out = append(out, row.Trace+" · "+row.Policy+" (missing)")
		}
	}
	return out
}

// Changed is the report with only the rows that are not within tolerance
// (regressions, improvements, missing and new cells); the counts are kept.
func (r *CheckReport) Changed() *CheckReport {
	c := *r
	c.Rows = nil
	for _, row := range r.Rows {
		if row.Verdict != Same {
			c.Rows = append(c.Rows, row)
		}
	}
	return &c
}

package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/traces"
)

// SweepMatrix is a two-key sweep's cost matrix: rows the first axis's
// values, columns the second's. points name the grid points in grid order
// (the last key varying fastest), as runs name their policy.
func SweepMatrix(axes []Axis, points []string, runs []RunSummary) *Matrix {
	at := map[string]int{}
	for i, p := range points {
		at[p] = i
	}
	nc := len(axes[1].Values)
	return NewMatrix(axes[0], axes[1], runs, func(r RunSummary) (string, string) {
		i := at[r.Policy]
		return axes[0].Values[i/nc], axes[1].Values[i%nc]
	})
}

// AxisNames joins the axes' keys as a sweep's title names them.
func AxisNames(axes []Axis) string {
	names := make([]string, len(axes))
	for i, ax := range axes {
		names[i] = ax.Key
	}
	return strings.Join(names, " × ")
}

// A SweepGrid names a sweep's grid: its base policy, its axes, and its
// points in grid order. Its JSON is what merge needs to print a sharded
// sweep.
type SweepGrid struct {
	Base   string   `json:"base"`
	Axes   []Axis   `json:"axes"`
	Points []string `json:"points"`
}

// Sort orders runs as the cells ran: by grid point, then by trace.
func (g SweepGrid) Sort(runs []RunSummary) {
	rank := map[string]int{}
	for i, p := range g.Points {
		rank[p] = i
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if rank[runs[i].Policy] != rank[runs[j].Policy] {
			return rank[runs[i].Policy] < rank[runs[j].Policy]
		}
		return runs[i].Trace < runs[j].Trace
	})
}

// Matrix is the cost matrix of a two-key sweep (SweepMatrix), nil for
// any other.
func (g SweepGrid) Matrix(runs []RunSummary) *Matrix {
	if len(g.Axes) != 2 {
		return nil
	}
	return SweepMatrix(g.Axes, g.Points, runs)
}

// Write prints the sweep's runs (in cell order) in f: the results as JSON,
// else the compare table of every cell grouped by trace, so the cheapest
// cell of each trace stands out, and in text and Markdown the cost matrix
// of a two-key sweep.
func (g SweepGrid) Write(w io.Writer, f Format, runs []RunSummary, warnings []traces.Warning) error {
	if f == JSON {
		return WriteResults(w, Results{Runs: runs})
	}
	byTrace := append([]RunSummary(nil), runs...)
	SortRuns(byTrace, g.Points)
	title := fmt.Sprintf("Sweep of %s over %s (%d cells)", g.Base, AxisNames(g.Axes), len(g.Points))
	if err := WriteRuns(w, f, byTrace, RunsOptions{Title: title, Warnings: warnings}); err != nil {
		return err
	}
	if m := g.Matrix(runs); m != nil && (f == Text || f == Markdown) {
		fmt.Fprintln(w)
		return m.Table().Write(w, f)
	}
	return nil
}

// SortRuns orders runs by trace, then by the order of policies.
func SortRuns(runs []RunSummary, policies []string) {
	rank := map[string]int{}
	for i, s := range policies {
		rank[s] = i
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Trace != runs[j].Trace {
			return runs[i].Trace < runs[j].Trace
		}
		return rank[runs[i].Policy] < rank[runs[j].Policy]
	})
}

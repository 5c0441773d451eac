package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// SweepMatrix is a two-key sweep's cost matrix: rows the first axis's
// values, columns the second's. points name the grid points in grid order
// (the last key varying fastest), as runs name their policy.
func SweepMatrix(axes []results.Axis, points []string, runs []results.RunSummary) *Matrix {
	at := map[string]int{}
	for i, p := range points {
		at[p] = i
	}
	nc := len(axes[1].Values)
	return NewMatrix(axes[0], axes[1], runs, func(r results.RunSummary) (string, string) {
		i := at[r.Policy]
		return axes[0].Values[i/nc], axes[1].Values[i%nc]
	})
}

// AxisNames joins the axes' keys as a sweep's title names them.
func AxisNames(axes []results.Axis) string {
	names := make([]string, len(axes))
	for i, ax := range axes {
		names[i] = ax.Key
	}
	return strings.Join(names, " × ")
}

// GridMatrix is the cost matrix of a two-key sweep (SweepMatrix), nil
// for any other.
func GridMatrix(g results.SweepGrid, runs []results.RunSummary) *Matrix {
	if len(g.Axes) != 2 {
		return nil
	}
	return SweepMatrix(g.Axes, g.Points, runs)
}

// WriteSweep prints the sweep's runs (in cell order) in f: the results as JSON,
// else the compare table of every cell grouped by trace, so the cheapest
// cell of each trace stands out, and in text and Markdown the cost matrix
// of a two-key sweep.
func WriteSweep(w io.Writer, f Format, g results.SweepGrid, runs []results.RunSummary, warnings []traces.Warning) error {
	if f == JSON {
		return WriteSummary(w, results.Summary{Runs: runs})
	}
	byTrace := append([]results.RunSummary(nil), runs...)
	results.SortRuns(byTrace, g.Points)
	title := fmt.Sprintf("Sweep of %s over %s (%d cells)", g.Base, AxisNames(g.Axes), len(g.Points))
	if err := WriteRuns(w, f, byTrace, RunsOptions{Title: title, Warnings: warnings}); err != nil {
		return err
	}
	if m := GridMatrix(g, runs); m != nil && (f == Text || f == Markdown) {
		fmt.Fprintln(w)
		return m.Table().Write(w, f)
	}
	return nil
}

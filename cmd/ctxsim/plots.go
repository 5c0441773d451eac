package main

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
)

// writePlots saves the per-trace figures (cumulative cost, occupancy, hit
// rate per call; one series per policy) as SVG and PNG, and their data as
// .tsv, to dir.
func writePlots(dir string, runs []report.RunSummary, recs []sim.Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	byTrace := map[string][]sim.Record{}
	for _, r := range recs {
		byTrace[r.Trace] = append(byTrace[r.Trace], r)
	}
	names := make([]string, 0, len(byTrace))
	for n := range byTrace {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, tr := range names {
		for _, f := range []report.Figure{report.CumulativeCostFigure(byTrace[tr]), report.OccupancyFigure(byTrace[tr]), report.HitRateFigure(byTrace[tr])} {
			f.Title += ": " + tr
			if err := saveFigure(dir, f.Name+"-"+fileSafe(tr), f); err != nil {
				return err
			}
		}
	}
	return nil
}

func saveFigure(dir, stem string, f report.Figure) error {
	for _, ext := range []string{"svg", "png"} {
		if err := report.WriteFileAtomic(filepath.Join(dir, stem+"."+ext), func(w io.Writer) error { return f.Render(w, ext) }); err != nil {
			return err
		}
	}
	return report.WriteFileAtomic(filepath.Join(dir, stem+".tsv"), f.WriteData)
}

// fileSafe keeps letters, digits, '-', '_' and '.', so trace ids make file
// names on any OS.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

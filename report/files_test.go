package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/results/resultstest"
)

// A price with a 1h tier gets the break-even and the idle-gap figures,
// each as SVG, PNG and its data; the data file is the figure's.
func TestWriteBreakevenFigures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	p := resultstest.Opus()
	if err := WriteBreakevenFigures(dir, p, 0.05); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	figs, err := BreakevenFigures(p, 0.05)
	if err != nil || len(figs) != 2 {
		t.Fatalf("%d figures, %v: want the break-even and the idle-gap ones", len(figs), err)
	}
	var want []string
	for _, f := range figs {
		want = append(want, f.Name+".png", f.Name+".svg", f.Name+".txt")
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("wrote %v, want %v", names, want)
	}
	var data bytes.Buffer
	if err := figs[0].WriteData(&data); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, figs[0].Name+".txt"))
	if err != nil || !bytes.Equal(got, data.Bytes()) {
		t.Errorf("%s.txt is not the figure's data (%v)", figs[0].Name, err)
	}
}

// WriteSummaryFile writes what WriteSummary writes, replacing the file.
func TestWriteSummaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	if err := os.WriteFile(path, []byte("old and longer than the new content, which must not keep a tail of it"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := results.Summary{Runs: []results.RunSummary{results.Summarize("t", "p", resultstest.Run(), results.Options{})}}
	if err := WriteSummaryFile(path, res); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteSummary(&want, res); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("summary.json:\n%s\nwant:\n%s (%v)", got, want.Bytes(), err)
	}
}

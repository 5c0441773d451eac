package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/internal/faultio"
	"github.com/ctxsim/ctxsim/internal/sumline"
	"github.com/ctxsim/ctxsim/results"
)

// dropTo writes what OpenJournal reports of a torn last line to b, as the
// CLI writes it to stderr.
func dropTo(b *bytes.Buffer) func(string, int) {
	return func(path string, line int) { fmt.Fprintf(b, "%s:%d: dropped the last line\n", path, line) }
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// journalCells lists the (cell, tenant) keys of cells.jsonl in file order.
func journalCells(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n") {
		var l JournalLine
		require.NoError(t, json.Unmarshal([]byte(line), &l), "line %q", line)
		out = append(out, l.Cell+" "+l.Tenant)
	}
	return out
}

func TestJournalTornOnly(t *testing.T) {
	// A journal whose only line is torn resumes from nothing.
	dir := t.TempDir()
	path := filepath.Join(dir, "cells.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"cell":"x[a=1]","tenant":"t","of":1,"run":{"tra`), 0o644))
	var errb bytes.Buffer
	lines, err := ReadJournalFile(path, dropTo(&errb))
	require.NoError(t, err)
	if len(lines) != 0 || !strings.Contains(errb.String(), "cells.jsonl:1: dropped the last line") {
		t.Errorf("lines %v, stderr %q", lines, errb.String())
	}
}

// A cell of several runs torn midway through its lines leaves complete
// lines of an incomplete cell: resume must run the whole cell again and
// drop those lines, so the journal never holds a cell twice.
func TestJournalTornMultiRunCell(t *testing.T) {
	dir := t.TempDir()
	var errb bytes.Buffer
	kw := &faultio.KillWriter{After: 1}
	wrap := func(w io.Writer) io.Writer { kw.W = w; return kw }
	meta := SweepMeta{Format: JournalFormat, Identity: Identity{Cells: "c", Flags: []string{"seed=1"}, Workload: "w", Sessions: 3}, Base: "p"}
	mk := func(name string, traces ...string) (*Cell, []results.RunSummary) {
		var runs []results.RunSummary
		for _, tr := range traces {
			runs = append(runs, results.RunSummary{Trace: tr, Policy: name, Requests: len(tr)})
		}
		return &Cell{Tenant: Tenant{Key: "tenant"}, Policy: Policy{Name: name}}, runs
	}
	c1, r1 := mk("p[a=1]", "x")
	c2, r2 := mk("p[a=2]", "x", "yy", "zzz")

	jr, done, closeJ, err := OpenJournal(dir, false, meta, wrap, dropTo(&errb))
	require.NoError(t, err)
	require.Empty(t, done)
	require.NoError(t, jr.Append(c1, r1))
	err = jr.Append(c2, r2)
	require.ErrorIs(t, err, faultio.ErrKilled)
	require.ErrorIs(t, jr.Append(c1, r1), faultio.ErrKilled, "a journal that failed refuses later writes")
	require.NoError(t, closeJ())
	path := filepath.Join(dir, "cells.jsonl")
	if n := strings.Count(readFile(t, path), "\n"); n != 2 {
		t.Fatalf("torn journal has %d complete lines, want 2 (c1 and the first run of c2)", n)
	}

	jr, done, closeJ, err = OpenJournal(dir, true, meta, nil, dropTo(&errb))
	require.NoError(t, err)
	if len(done) != 1 || len(done[c1.JournalKey()]) != 1 {
		t.Fatalf("resumed done = %v, want only %s", done, c1.Policy.Name)
	}
	if got := journalCells(t, path); !slices.Equal(got, []string{"p[a=1] tenant"}) {
		t.Errorf("rewritten journal = %q, want only c1's line", got)
	}
	require.NoError(t, jr.Append(c2, r2))
	require.NoError(t, closeJ())

	lines, err := ReadJournalFile(path, dropTo(&errb))
	require.NoError(t, err)
	done = CompleteCells(lines)
	got := done[c2.JournalKey()]
	if len(got) != 3 || got[0].Trace != "x" || got[1].Trace != "yy" || got[2].Trace != "zzz" {
		t.Errorf("c2 runs = %+v, want x, yy, zzz in order", got)
	}

	meta.Identity.Workload = "other"
	if _, _, _, err := OpenJournal(dir, true, meta, nil, dropTo(&errb)); err == nil || !strings.Contains(err.Error(), "the workload differs (3 sessions then, 3 now") {
		t.Errorf("resume with another workload: err = %v", err)
	}
}

// TestResumeRefusesEdits pins issue 27's trusted journal: sweep --resume
// after an edit of cells.jsonl starred a -$123,456 cell. A line whose
// checksum does not verify is refused naming the file and line, and so is
// a line resealed by hand whose run holds a figure no run can have.
func TestResumeRefusesEdits(t *testing.T) {
	meta := SweepMeta{Format: JournalFormat, Identity: Identity{Cells: "c", Flags: []string{"seed=1"}, Workload: "w", Sessions: 2}, Base: "p"}
	write := func(t *testing.T) string {
		dir := t.TempDir()
		jr, _, closeJ, err := OpenJournal(dir, false, meta, nil, nil)
		require.NoError(t, err)
		for i, name := range []string{"p[a=1]", "p[a=2]"} {
			run := results.RunSummary{Trace: "s", Policy: name, Requests: 3, CostUSD: float64(i + 1)}
			require.NoError(t, jr.Append(&Cell{Tenant: Tenant{Key: "tenant"}, Policy: Policy{Name: name}}, []results.RunSummary{run}))
		}
		require.NoError(t, closeJ())
		return dir
	}
	dir := write(t)
	path := filepath.Join(dir, "cells.jsonl")
	b := readFile(t, path)
	edited := strings.Replace(b, `"cost_usd":2`, `"cost_usd":-123456`, 1)
	require.NotEqual(t, b, edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	_, _, _, err := OpenJournal(dir, true, meta, nil, nil)
	if err == nil || !strings.Contains(err.Error(), path+":2: checksum mismatch") {
		t.Errorf("edited journal: %v", err)
	}

	// Resealed (the sum recomputed): the figure itself is refused.
	dir = write(t)
	path = filepath.Join(dir, "cells.jsonl")
	lines := strings.SplitAfter(readFile(t, path), "\n")
	var l JournalLine
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &l))
	l.Run.CostUSD = -123456
	resealed, err := sumline.Line(l)
	require.NoError(t, err)
	lines[1] = string(resealed)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644))
	_, _, _, err = OpenJournal(dir, true, meta, nil, nil)
	if err == nil || !strings.Contains(err.Error(), path+":2: run: cost_usd: want a number ≥ 0, got -123456") {
		t.Errorf("resealed journal: %v", err)
	}
}

// TestResumeRefusesPlantedFIFO: sweep --resume on a directory whose
// cells.jsonl (or sweep.json) is a FIFO hung in open, waiting for a
// writer, and ignored SIGTERM; it is refused, naming the file.
func TestResumeRefusesPlantedFIFO(t *testing.T) {
	meta := SweepMeta{Format: JournalFormat, Identity: Identity{Cells: "c", Workload: "w", Sessions: 1}, Base: "p"}
	for _, name := range []string{"cells.jsonl", "sweep.json"} {
		dir := t.TempDir()
		_, _, closeJ, err := OpenJournal(dir, false, meta, nil, nil)
		require.NoError(t, err)
		require.NoError(t, closeJ())
		path := filepath.Join(dir, name)
		require.NoError(t, os.Remove(path))
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan error, 1)
		go func() { _, _, _, err := OpenJournal(dir, true, meta, nil, nil); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path+": is a FIFO, not a regular file") {
				t.Errorf("%s a FIFO: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s a FIFO: OpenJournal still waiting after 5 s", name)
		}
	}
}

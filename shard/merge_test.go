package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeRun splits 12 cells of a run (3 policies × 4 tenants, each cell
// writing i%3 record lines) over n shards the way a command does, and
// returns the shard directories and the unsharded records.jsonl.
func fakeRun(t *testing.T, n int, edit func(k int, m *Manifest)) ([]string, string) {
	t.Helper()
	root := t.TempDir()
	var want strings.Builder
	type shardOut struct {
		cells []Entry
		recs  strings.Builder
	}
	outs := make([]shardOut, n+1)
	for p := range 3 {
		for g := range 4 {
			unit := fmt.Sprintf("tenant-%d", g)
			k := Assign(unit, n)
			c := Entry{Order: []int{p, g}, Unit: unit, Runs: json.RawMessage(fmt.Sprintf(`[{"trace":%q,"policy":"p%d"}]`, unit, p))}
			for r := range (p + g) % 3 {
				line := fmt.Sprintf(`{"trace":%q,"policy":"p%d","seq":%d}`+"\n", unit, p, r)
				want.WriteString(line)
				outs[k].recs.WriteString(line)
				c.Records++
			}
			outs[k].cells = append(outs[k].cells, c)
		}
	}
	var dirs []string
	for k := 1; k <= n; k++ {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", k))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		m := Manifest{Version: "test", Command: "compare", Shard: fmt.Sprintf("%d/%d", k, n), Seed: 1,
			Flags: []string{"sessions=2", "provider=auto"}, Inputs: []Input{{"suite", "abc"}}}
		if edit != nil {
			edit(k, &m)
		}
		if err := WriteEntries(d, outs[k].cells); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, RecordsFile), []byte(outs[k].recs.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		resum(t, d, &m)
		dirs = append(dirs, d)
	}
	return dirs, want.String()
}

// resum writes d's manifest m with the hashes of d's files as they are
// now, as WriteDir does: a shard written consistently, if wrongly.
func resum(t *testing.T, d string, m *Manifest) {
	t.Helper()
	files, err := fileSums(d)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = files
	if err := WriteManifest(d, *m); err != nil {
		t.Fatal(err)
	}
}

func TestMergeOrderAndBytes(t *testing.T) {
	dirs, want := fakeRun(t, 3, nil)
	// The order the directories are given in does not matter.
	dirs[0], dirs[2] = dirs[2], dirs[0]
	m, err := Merge(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 12 {
		t.Fatalf("%d cells, want 12", len(m.Entries))
	}
	for i, c := range m.Entries {
		if c.Order[0] != i/4 || c.Order[1] != i%4 {
			t.Fatalf("cell %d has order %v", i, c.Order)
		}
	}
	var got bytes.Buffer
	if err := m.WriteRecords(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("merged records:\n%s\nwant:\n%s", got.String(), want)
	}
	var lines []string
	if err := m.EachRecord(func(b []byte) error { lines = append(lines, string(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(lines, "\n")+"\n" != want {
		t.Errorf("EachRecord gave %d lines, not the merged records", len(lines))
	}
	if string(m.Entries[0].Runs) != `[{"trace":"tenant-0","policy":"p0"}]` || string(m.Entries[5].Runs) != `[{"trace":"tenant-1","policy":"p1"}]` {
		t.Errorf("entries not in cell order: %s, %s", m.Entries[0].Runs, m.Entries[5].Runs)
	}
	if m.Manifest.Shard != "" || m.Manifest.Seed != 1 {
		t.Errorf("merged manifest %+v", m.Manifest)
	}
}

func TestMergeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(k int, m *Manifest)
		dirs func([]string) []string
		want string
	}{
		{"missing", nil, func(d []string) []string { return d[:2] }, "shard 3/3 missing"},
		{"duplicated", nil, func(d []string) []string { return []string{d[0], d[1], d[2], d[1]} }, "shard 2/3 given twice"},
		{"flags", func(k int, m *Manifest) {
			if k == 2 {
				m.Flags[1] = "provider=openai"
			}
		}, nil, `shard-2 (shard 2/3) is from another run than`},
		{"seed", func(k int, m *Manifest) { m.Seed = uint64(k) }, nil, "seed 1 vs 2"},
		{"inputs", func(k int, m *Manifest) {
			if k == 3 {
				m.Inputs[0].Hash = "def"
			}
		}, nil, `input suite hashes "abc" vs "def"`},
		{"n", func(k int, m *Manifest) {
			if k == 3 {
				m.Shard = "3/4"
			}
		}, nil, "is shard 3/4 but"},
		{"version", func(k int, m *Manifest) { m.Version = fmt.Sprint(k) }, nil, `ctxsim version "1" vs "2"`},
		{"none", nil, func([]string) []string { return nil }, "no shard directories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs, _ := fakeRun(t, 3, tc.edit)
			if tc.dirs != nil {
				dirs = tc.dirs(dirs)
			}
			_, err := Merge(context.Background(), dirs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Merge: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestMergeRefusesBadFiles(t *testing.T) {
	dirs, _ := fakeRun(t, 2, nil)
	if _, err := Merge(context.Background(), []string{dirs[0], t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("a directory without a manifest: %v", err)
	}
	// A shard whose records.jsonl lost a line.
	p := filepath.Join(dirs[1], RecordsFile)
	b, _ := os.ReadFile(p)
	if len(b) == 0 {
		p = filepath.Join(dirs[0], RecordsFile)
		b, _ = os.ReadFile(p)
	}
	os.WriteFile(p, b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], 0o644)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), RecordsFile+": not the file the shard wrote") {
		t.Errorf("short records.jsonl: %v", err)
	}
	// Rehashed in its manifest, the count of lines still has to agree.
	m, err := ReadManifest(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	resum(t, filepath.Dir(p), &m)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), "says") {
		t.Errorf("short records.jsonl, rehashed: %v", err)
	}
	// A cell in two shards: shard 2 claims shard 1's cells too.
	dirs, _ = fakeRun(t, 2, nil)
	c1, _ := os.ReadFile(filepath.Join(dirs[0], CellsFile))
	c2, _ := os.ReadFile(filepath.Join(dirs[1], CellsFile))
	r1, _ := os.ReadFile(filepath.Join(dirs[0], RecordsFile))
	r2, _ := os.ReadFile(filepath.Join(dirs[1], RecordsFile))
	os.WriteFile(filepath.Join(dirs[1], CellsFile), append(c2, c1...), 0o644)
	os.WriteFile(filepath.Join(dirs[1], RecordsFile), append(r2, r1...), 0o644)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), CellsFile+": not the file the shard wrote") {
		t.Errorf("a cell in two shards: %v", err)
	}
	m, _ = ReadManifest(dirs[1])
	resum(t, dirs[1], &m)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), "is in two shards") {
		t.Errorf("a cell in two shards, rehashed: %v", err)
	}
	// A bad cells line is file:line.
	os.WriteFile(filepath.Join(dirs[1], CellsFile), append(c2, []byte("{\"order\":[1]}\n")...), 0o644)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d: no checksum", CellsFile, bytes.Count(c2, []byte{'\n'})+1)) {
		t.Errorf("a bad cells line: %v", err)
	}
}

// TestMergeRefusesEdits pins issue 27's trusted shards: an edit of a
// shard's cells (merge then reported -5 requests, a cost of -1e308 and a
// 750 % hit rate, exit 0) is refused naming the file and line; so is an
// edited manifest.
func TestMergeRefusesEdits(t *testing.T) {
	dirs, _ := fakeRun(t, 2, nil)
	p := filepath.Join(dirs[0], CellsFile)
	b, _ := os.ReadFile(p)
	edited := bytes.Replace(b, []byte(`"policy":"p0"`), []byte(`"policy":"p0","requests":-5,"cost_usd":-1e308`), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("nothing to edit")
	}
	line := bytes.Count(b[:bytes.Index(b, []byte(`"policy":"p0"`))], []byte{'\n'}) + 1
	os.WriteFile(p, edited, 0o644)
	_, err := Merge(context.Background(), dirs)
	if want := fmt.Sprintf("%s:%d: checksum mismatch", p, line); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("edited cell: %v; want %q", err, want)
	}
	dirs, _ = fakeRun(t, 2, nil)
	mp := filepath.Join(dirs[1], ManifestFile)
	mb, _ := os.ReadFile(mp)
	os.WriteFile(mp, bytes.Replace(mb, []byte(`"seed": 1`), []byte(`"seed": 2`), 1), 0o644)
	if _, err := Merge(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), mp+":1: checksum mismatch") {
		t.Errorf("edited manifest: %v", err)
	}
}

// TestMergeRefusesPlantedFIFO: a shard's manifest.json, shard-cells.jsonl
// or records.jsonl replaced by a FIFO made merge wait in open for a writer
// forever (SIGTERM or not); it is refused, naming the file.
func TestMergeRefusesPlantedFIFO(t *testing.T) {
	for _, name := range []string{ManifestFile, CellsFile, RecordsFile} {
		dirs, _ := fakeRun(t, 2, nil)
		p := filepath.Join(dirs[1], name)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan error, 1)
		go func() { _, err := Merge(context.Background(), dirs); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p+": is a FIFO, not a regular file") {
				t.Errorf("%s a FIFO: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s a FIFO: merge still waiting after 5 s", name)
		}
	}
}

func TestHashFiles(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		os.MkdirAll(filepath.Join(d, "sub"), 0o755)
		os.WriteFile(filepath.Join(d, "x.jsonl"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(d, "sub", "y.jsonl"), []byte("y"), 0o644)
	}
	ha, err := HashFiles(os.DirFS(a), ".")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := HashFiles(os.DirFS(b), ".")
	if ha != hb {
		t.Errorf("same files, different hashes %s %s", ha, hb)
	}
	os.WriteFile(filepath.Join(b, "sub", "y.jsonl"), []byte("z"), 0o644)
	if hb, _ := HashFiles(os.DirFS(b), "."); hb == ha {
		t.Error("a changed file kept the hash")
	}
	os.WriteFile(filepath.Join(b, "sub", "y.jsonl"), []byte("y"), 0o644)
	os.Rename(filepath.Join(b, "sub", "y.jsonl"), filepath.Join(b, "sub", "w.jsonl"))
	if hb, _ := HashFiles(os.DirFS(b), "."); hb == ha {
		t.Error("a renamed file kept the hash")
	}
}

// Merge stops, with ctx's error, when ctx is cancelled.
func TestMergeCancelled(t *testing.T) {
	dirs, _ := fakeRun(t, 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Merge(ctx, dirs); !errors.Is(err, context.Canceled) {
		t.Errorf("Merge: %v, want context.Canceled", err)
	}
}

package shard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/internal/sumline"
	"github.com/ctxsim/ctxsim/traces"
)

// Merged is the shards of one run put back together.
type Merged struct {
	// Manifest is the run's, with Shard "".
	Manifest Manifest
	// Entries are every shard's entries in the unsharded run's order.
	Entries []Entry
	// Failed is how many sessions the run could not load
	// (Manifest.Failed): every shard reads every input, so the first
	// shard's count, but cost's shards scan different files, so theirs
	// add up.
	Failed int
	// recs locates each entry's records.jsonl lines, parallel to Entries.
	recs []span
}

type span struct {
	file      string
	off, size int64
}

// Merge reads the shard directories of one run. It fails, naming the
// directory, on a missing or unreadable manifest, a shard from another run
// (its manifest differs), a shard given twice or missing, a cell present in
// two shards, and a records.jsonl whose line count disagrees with the cells
// that wrote it. It stops when ctx is cancelled.
func Merge(ctx context.Context, dirs []string) (*Merged, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge: no shard directories")
	}
	ms := make([]Manifest, len(dirs))
	byK := map[int]string{}
	n := 0
	for i, d := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := ReadManifest(d)
		if err != nil {
			return nil, err
		}
		sp, _ := Parse(m.Shard)
		if i == 0 {
			n = sp.N
		} else if sp.N != n {
			return nil, fmt.Errorf("%s is shard %s but %s is shard %s: shards of one run have the same N", d, m.Shard, dirs[0], ms[0].Shard)
		}
		if prev, dup := byK[sp.K]; dup {
			return nil, fmt.Errorf("shard %s given twice: %s and %s", m.Shard, prev, d)
		}
		if i > 0 {
			if why := ms[0].diff(m); why != "" {
				return nil, fmt.Errorf("%s (shard %s) is from another run than %s (shard %s): %s", d, m.Shard, dirs[0], ms[0].Shard, why)
			}
		}
		byK[sp.K] = d
		ms[i] = m
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := byK[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s missing: merge needs all %d shards of the run", strings.Join(missing, ", "), n)
	}
	out := &Merged{Manifest: ms[0], Failed: ms[0].Failed}
	out.Manifest.Shard, out.Manifest.Files, out.Manifest.Failed = "", nil, 0
	if ms[0].Command == "cost" {
		for _, m := range ms[1:] {
			out.Failed += m.Failed
		}
	}
	type at struct {
		c   Entry
		s   span
		dir string
	}
	var all []at
	for i, d := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cells, err := readEntries(filepath.Join(d, CellsFile))
		if err != nil {
			return nil, err
		}
		if err := checkFiles(d, ms[i]); err != nil {
			return nil, err
		}
		spans, err := recordSpans(filepath.Join(d, RecordsFile), cells)
		if err != nil {
			return nil, err
		}
		for i, c := range cells {
			all = append(all, at{c, spans[i], d})
		}
	}
	slices.SortStableFunc(all, func(a, b at) int { return slices.Compare(a.c.Order, b.c.Order) })
	for i := 1; i < len(all); i++ {
		if slices.Equal(all[i-1].c.Order, all[i].c.Order) {
			return nil, fmt.Errorf("cell %s (order %v) is in two shards, %s and %s: they were not split by one assignment",
				all[i].c.Unit, all[i].c.Order, all[i-1].dir, all[i].dir)
		}
	}
	for _, a := range all {
		out.Entries = append(out.Entries, a.c)
		out.recs = append(out.recs, a.s)
	}
	return out, nil
}

// readEntries reads a shard-cells.jsonl file; a bad line is file:line: why.
func readEntries(p string) ([]Entry, error) {
	f, err := atomicfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	var out []Entry
	for line := 1; sc.Scan(); line++ {
		var c Entry
		if err := sumline.Check(sc.Bytes()); err != nil {
			return nil, &traces.SyntaxError{File: p, Line: line, Msg: err.Error()}
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, &traces.SyntaxError{File: p, Line: line, Msg: err.Error()}
		}
		if len(c.Order) == 0 || c.Records < 0 {
			return nil, &traces.SyntaxError{File: p, Line: line, Msg: "cell without order, or negative records"}
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// recordSpans cuts records.jsonl into the cells' byte ranges. A shard that
// wrote no records (sweep, cost) has no file and cells of 0 records.
func recordSpans(p string, cells []Entry) ([]span, error) {
	want := 0
	for _, c := range cells {
		want += c.Records
	}
	spans := make([]span, len(cells))
	f, err := atomicfile.Open(p)
	if os.IsNotExist(err) && want == 0 {
		return spans, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var off int64
	lines := 0
	for i, c := range cells {
		spans[i] = span{file: p, off: off}
		for range c.Records {
			b, err := br.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				off += int64(len(b))
				b, err = br.ReadSlice('\n')
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %d lines, but %s says %d", p, lines, CellsFile, want)
			}
			off += int64(len(b))
			lines++
		}
		spans[i].size = off - spans[i].off
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%s: more than the %d lines %s says", p, want, CellsFile)
	}
	return spans, nil
}

// WriteRecords copies every cell's records.jsonl lines to w, in cell
// order, byte for byte.
func (m *Merged) WriteRecords(w io.Writer) error {
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, s := range m.recs {
		if s.size == 0 {
			continue
		}
		f := files[s.file]
		if f == nil {
			var err error
			if f, err = atomicfile.Open(s.file); err != nil {
				return err
			}
			files[s.file] = f
		}
		if _, err := io.Copy(w, io.NewSectionReader(f, s.off, s.size)); err != nil {
			return err
		}
	}
	return nil
}

// EachRecord calls fn with every record line (without its newline) in
// order; the slice is reused.
func (m *Merged) EachRecord(fn func(line []byte) error) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(m.WriteRecords(pw)) }()
	defer pr.Close()
	br := bufio.NewReaderSize(pr, 1<<16)
	var buf []byte
	for {
		b, err := br.ReadSlice('\n')
		buf = append(buf[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = br.ReadSlice('\n')
			buf = append(buf, b...)
		}
		if len(buf) > 0 {
			if ferr := fn(bytes.TrimSuffix(buf, []byte("\n"))); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

package runner

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/sumline"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/traces"
)

// JournalFormat names the layout of a sweep's meta file and journal.
const JournalFormat = "ctxsim-sweep/2"

// SweepMeta identifies a sweep: what its sweep.json holds.
type SweepMeta struct {
	Format   string     `json:"format"`
	Identity Identity   `json:"identity"`
	Base     string     `json:"base"`
	Grid     []MetaAxis `json:"grid"`
}

// MetaAxis is an Axis as SweepMeta records it.
type MetaAxis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// MetaGrid is axes as SweepMeta records them.
func MetaGrid(axes []results.Axis) []MetaAxis {
	out := make([]MetaAxis, len(axes))
	for i, ax := range axes {
		out[i] = MetaAxis{ax.Key, ax.Values}
	}
	return out
}

// Identity is what identifies a sweep's results, in parts so that a
// refused resume can say which one differs. The ctxsim build is not in
// it: resuming with a changed binary mixes its results.
type Identity struct {
	// Cells hashes every cell's name and full settings, in grid order.
	Cells string `json:"cells"`
	// Flags are the other settings as name=value, in a fixed order, that
	// can change a result (the seed, the provider, the fault rates...).
	Flags []string `json:"flags"`
	// Prices hashes the price file's content ("" for the embedded card).
	Prices string `json:"prices,omitempty"`
	// Workload hashes every session replayed, in the native format.
	Workload string `json:"workload"`
	// Sessions is the number of sessions, for the error message.
	Sessions int `json:"sessions"`
}

// NewIdentity hashes a sweep's inputs: its grid points, the settings flags
// that change results, the price file's bytes (nil: none) and the sessions.
func NewIdentity(points []Policy, flags []string, prices []byte, sessions []*traces.Session) (Identity, error) {
	id := Identity{Flags: flags}
	sum := func(d *xxhash.Digest) string { return hex.EncodeToString(d.Sum(nil)) }
	cells := xxhash.New()
	for _, p := range points {
		fmt.Fprintf(cells, "cell %q\n", p.Name)
		for _, s := range p.Config.Settings() {
			fmt.Fprintf(cells, "%s=%q\n", s.Key, s.Value)
		}
	}
	id.Cells = sum(cells)
	if prices != nil {
		id.Prices = strconv.FormatUint(xxhash.Sum64(prices), 16)
	}
	wl := xxhash.New()
	for _, s := range sessions {
		// Tenant and format decide grouping and filtering; the native
		// writer may not carry them.
		fmt.Fprintf(wl, "session %q tenant=%q format=%q\n", s.ID, s.Tenant, s.Format)
		if err := traces.WriteSession(wl, s); err != nil {
			return Identity{}, fmt.Errorf("hash session %s: %w", s.ID, err)
		}
	}
	id.Workload, id.Sessions = sum(wl), len(sessions)
	return id, nil
}

// Diff says what differs between the sweep on disk (a) and this one (b),
// or "": a flag by the name it was given as (Identity.Flags), the price
// file as {price file} (an InputError's input).
func (a Identity) Diff(b Identity) string {
	if a.Cells != b.Cells {
		return "the grid or the base policy's settings differ"
	}
	if !slices.Equal(a.Flags, b.Flags) {
		was := map[string]string{}
		for _, f := range a.Flags {
			k, v, _ := strings.Cut(f, "=")
			was[k] = v
		}
		for _, f := range b.Flags {
			k, v, _ := strings.Cut(f, "=")
			if w, ok := was[k]; !ok || w != v {
				return fmt.Sprintf("--%s was %q, now %q", k, w, v)
			}
		}
		return "the flags differ"
	}
	if a.Prices != b.Prices {
		return "the {price file} differs"
	}
	if a.Workload != b.Workload {
		return fmt.Sprintf("the workload differs (%d sessions then, %d now, or their content)", a.Sessions, b.Sessions)
	}
	return ""
}

// A JournalLine is one line of a sweep journal: one run of one cell. A
// cell's lines are written in one write and count as done only when all Of
// of them are present; a cell with no root sessions writes one line
// without a run.
type JournalLine struct {
	Cell   string              `json:"cell"`
	Tenant string              `json:"tenant"`
	Of     int                 `json:"of"`
	Run    *results.RunSummary `json:"run,omitempty"`
}

func (l JournalLine) key() string { return l.Cell + "\x00" + l.Tenant }

// JournalKey identifies a cell in a journal: its policy and its tenant.
func (c *Cell) JournalKey() string { return c.Policy.Name + "\x00" + c.Tenant.Key }

// A Journal appends finished cells to a writer, one write per cell, and
// syncs it when it can (an *os.File). It is safe for concurrent use. After
// a failed write it refuses every later one with the same error: a torn
// line may be on the writer, and results that cannot be saved should not
// be computed.
type Journal struct {
	w    io.Writer
	name string
	mu   sync.Mutex
	err  error
}

// NewJournal journals to w; name is how errors call it.
func NewJournal(w io.Writer, name string) *Journal { return &Journal{w: w, name: name} }

// Append writes c's runs as one write, and syncs.
func (j *Journal) Append(c *Cell, runs []results.RunSummary) error {
	var buf bytes.Buffer
	enc := sumline.NewWriter(&buf)
	l := JournalLine{Cell: c.Policy.Name, Tenant: c.Tenant.Key, Of: len(runs)}
	if len(runs) == 0 {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	for i := range runs {
		l.Run = &runs[i]
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if _, err := j.w.Write(buf.Bytes()); err != nil {
		j.err = fmt.Errorf("write %s: %w", j.name, err)
		return j.err
	}
	if s, ok := j.w.(interface{ Sync() error }); ok {
		if err := s.Sync(); err != nil {
			j.err = fmt.Errorf("sync %s: %w", j.name, err)
			return j.err
		}
	}
	return nil
}

// ReadJournal reads a journal named name. A last line without its newline
// is an interrupted write: it is dropped and reported to dropped with its
// line number. Any other bad line is a *traces.SyntaxError naming it: one
// whose checksum does not verify (Append seals each line, sumline), or
// whose run holds a figure no run can have (results.CheckRun): a journal
// is read back as results, not trusted.
func ReadJournal(r io.Reader, name string, dropped func(line int)) ([]JournalLine, error) {
	br := bufio.NewReader(r)
	var out []JournalLine
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if len(text) == 0 && err == io.EOF {
			return out, nil
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		complete := err == nil
		var l JournalLine
		jerr := sumline.Check(text)
		if jerr == nil {
			jerr = json.Unmarshal(bytes.TrimSuffix(text, []byte("\n")), &l)
		}
		if jerr == nil && (l.Cell == "" || l.Tenant == "" || l.Of < 0 || (l.Of > 0) != (l.Run != nil)) {
			jerr = errors.New("missing cell, tenant, of or run")
		}
		if jerr == nil && l.Run != nil {
			if err := results.CheckRun(l.Run); err != nil {
				jerr = fmt.Errorf("run: %v", err)
			}
		}
		if jerr != nil {
			if !complete {
				if dropped != nil {
					dropped(line)
				}
				return out, nil
			}
			return nil, &traces.SyntaxError{File: name, Line: line, Msg: jerr.Error()}
		}
		out = append(out, l)
		if !complete {
			return out, nil
		}
	}
}

// CompleteCells keeps the cells all of whose lines are present, by
// JournalKey, each with its runs in the order written. A cell journaled
// twice (it cannot be, but a hand-edited file might) keeps its first
// complete copy.
func CompleteCells(lines []JournalLine) map[string][]results.RunSummary {
	type acc struct {
		of   int
		runs []results.RunSummary
		n    int
	}
	m := map[string]*acc{}
	done := map[string][]results.RunSummary{}
	for _, l := range lines {
		k := l.key()
		if _, ok := done[k]; ok {
			continue
		}
		a := m[k]
		if a == nil || a.of != l.Of {
			a = &acc{of: l.Of}
			m[k] = a
		}
		if l.Run != nil {
			a.runs = append(a.runs, *l.Run)
		}
		a.n++
		if a.n == max(a.of, 1) {
			done[k] = a.runs
			delete(m, k)
		}
	}
	return done
}

// WriteComplete writes the lines of the cells in done (from
// CompleteCells), dropping any torn or incomplete cell, so appends after it
// start on a line boundary.
func WriteComplete(w io.Writer, lines []JournalLine, done map[string][]results.RunSummary) error {
	enc := sumline.NewWriter(w)
	for _, l := range lines {
		if _, ok := done[l.key()]; ok {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// Resume marks the cells done holds (from CompleteCells) as finished, with
// their journaled runs, so Run and Sweep skip them; it returns how many.
func Resume(cells []*Cell, done map[string][]results.RunSummary) int {
	n := 0
	for _, c := range cells {
		if runs, ok := done[c.JournalKey()]; ok {
			c.Result = &Result{Runs: runs}
			n++
		}
	}
	return n
}

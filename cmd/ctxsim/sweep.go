package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

func init() {
	register(&command{
		name:    "sweep",
		summary: "replay traces under a grid of settings of one policy; resumable",
		usage:   "--policy P --grid KEY=V1,V2,... [--grid ...] [--trace PATH]... [--profile P]... [flags]",
		help: `Sweep replays every trace under the cross product of the --grid values
applied to one base policy (a preset or a .yaml/.json config), and prints
the compare table of every grid cell. Each cell is named after the base
policy and its grid values, in --grid order, with each key shortened to its
last element: hermes-micro[micro_compact_every_n_turns=5,cache_ttl=1h].
--set overrides apply to the base before the grid.

With exactly two --grid keys the text and Markdown output end with a
matrix of total cost (summed over the traces), rows the first key's
values and columns the second's, and --plots writes heatmaps of that cost
and of the token-weighted cache hit rate.

The workload is chosen as for compare; with no --trace and no --profile it
is the embedded suite. Output is byte-identical for any -j.

With --out DIR, every finished cell is appended to DIR/cells.jsonl as soon
as it finishes (one JSON line per trace of the cell, synced to disk), and
DIR/summary.json is written at the end, runs in grid order then by trace.
DIR/sweep.json identifies the sweep by every input that changes a result:
the cells' settings, the simulation flags (--seed, --provider, the fault
rates...), the --prices file and the sessions themselves, hashed. "--resume" continues an interrupted sweep in DIR: it
keeps the cells already in cells.jsonl (a last line cut short by the
interruption is dropped with a warning), runs the rest, and prints and
writes exactly what an uninterrupted run would. It refuses a DIR whose
sweep.json differs from the command line's. Without --resume, sweep
refuses a DIR that already holds cells. Sweep does not write
records.jsonl or report.html: use compare on the cells you care about.

Examples:
  ctxsim sweep --policy hermes-micro --profile coding-burst \
      --grid compression.micro_compact_every_n_turns=1,2,5,10 \
      --grid prompt_caching.cache_ttl=5m,1h
  ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 \
      --trace ~/.claude/projects --out sweeps/threshold
  ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 \
      --trace ~/.claude/projects --out sweeps/threshold --resume
  ctxsim sweep --policy my-policy.yaml --grid prompt_caching.cache_ttl=5m,1h,auto \
      --grid prompt_caching.layout=hermes,system_and_3 --plots figs/ --json`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			sw := sweepFlags{fs: fs}
			sw.wf.add(fs)
			sw.sf.add(fs, "")
			fs.Lookup("policy").Usage = "the base policy: a preset (see ctxsim policies) or a .yaml/.json config; required"
			fs.StringArrayVar(&sw.grid, "grid", nil, "a setting and the values to sweep, key=v1,v2,...; repeatable (the cross product runs)")
			sw.of.add(fs)
			fs.Lookup("out").Usage = "directory to write cells.jsonl (as cells finish), sweep.json and summary.json to"
			fs.BoolVar(&sw.resume, "resume", false, "continue the interrupted sweep in --out, skipping finished cells")
			fs.StringVar(&sw.plots, "plots", "", "directory to write cost and hit-rate heatmaps to (exactly two --grid keys)")
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q (traces go after --trace)", args[0])
				}
				return runSweep(e, &sw)
			}
		},
	})
}

type sweepFlags struct {
	fs     *pflag.FlagSet
	wf     workloadFlags
	sf     simFlags
	of     outFlags
	grid   []string
	resume bool
	plots  string
}

// sweepKill is a test hook standing in for kill -9: after its after-th cell
// is written to cells.jsonl the sweep stops as if killed (no summary, no
// stdout), and with torn set it first writes half of the next cell's lines.
// after = 0 disables it.
var sweepKill struct {
	after int
	torn  bool
}

// errSweepKilled is what a sweep stopped by sweepKill returns.
var errSweepKilled = errors.New("sweep stopped by the test hook")

// A gridAxis is one --grid flag: a setting and its values, in flag order.
type gridAxis struct {
	key, short string
	values     []string
}

// parseGrid checks every --grid flag against base: the key exists, every
// value is accepted by Config.Set, no two values give the same setting, and
// no key is swept twice or also fixed by --set.
func parseGrid(flags, sets []string, base policies.Config) ([]gridAxis, error) {
	if len(flags) == 0 {
		return nil, usagef("--grid: want at least one key=v1,v2,...")
	}
	fixed := map[string]bool{}
	for _, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		fixed[k] = true
	}
	var axes []gridAxis
	seen := map[string]bool{}
	for _, g := range flags {
		key, list, ok := strings.Cut(g, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return nil, usagef("--grid %q: want key=v1,v2,...", g)
		}
		if seen[key] {
			return nil, usagef("--grid %s: key given twice", key)
		}
		if fixed[key] {
			return nil, usagef("--grid %s: key is also fixed by --set", key)
		}
		seen[key] = true
		ax := gridAxis{key: key}
		effective := map[string]string{}
		for _, v := range strings.Split(list, ",") {
			v = strings.TrimSpace(v)
			c := base
			if err := c.Set(key, v); err != nil {
				return nil, usagef("--grid %s: %v", key, err)
			}
			got, ok := c.Get(key)
			if !ok {
				got = v // a per-model threshold: Set has parsed it
			}
			if prev, dup := effective[got]; dup {
				return nil, usagef("--grid %s: values %q and %q are the same setting", key, prev, v)
			}
			effective[got] = v
			ax.values = append(ax.values, v)
		}
		axes = append(axes, ax)
	}
	keys := make([]string, len(axes))
	for i, ax := range axes {
		keys[i] = ax.key
	}
	for i, s := range shortNames(keys) {
		axes[i].short = s
	}
	return axes, nil
}

// shortNames shortens each key to its last element (a per-model threshold
// to model_thresholds.<model>), unless two keys would share the short name.
func shortNames(keys []string) []string {
	short := func(k string) string {
		if m, ok := strings.CutPrefix(k, "compression.model_thresholds."); ok {
			return "model_thresholds." + m
		}
		return k[strings.LastIndex(k, ".")+1:]
	}
	count := map[string]int{}
	for _, k := range keys {
		count[short(k)]++
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		if s := short(k); count[s] == 1 {
			out[i] = s
		}
	}
	return out
}

// gridPoints is the cross product of axes applied to base, the last axis
// varying fastest, each named base[k1=v1,k2=v2].
func gridPoints(base policies.Config, axes []gridAxis) ([]policySpec, error) {
	idx := make([]int, len(axes))
	var out []policySpec
	for {
		c := base
		parts := make([]string, len(axes))
		for i, ax := range axes {
			if err := c.Set(ax.key, ax.values[idx[i]]); err != nil {
				return nil, usagef("--grid %s: %v", ax.key, err)
			}
			parts[i] = ax.short + "=" + ax.values[idx[i]]
		}
		c.Name = base.Name + "[" + strings.Join(parts, ",") + "]"
		out = append(out, policySpec{name: c.Name, config: &c})
		i := len(axes) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(axes[i].values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

func runSweep(e *env, sw *sweepFlags) error {
	format, err := sw.of.parse()
	if err != nil {
		return err
	}
	switch {
	case len(sw.sf.policies) == 0:
		return usagef("--policy: sweep needs the base policy (a preset or a .yaml/.json config)")
	case len(sw.sf.policies) > 1:
		return usagef("--policy: sweep takes one base policy, got %d", len(sw.sf.policies))
	case sw.sf.policies[0] == sim.RecordedName:
		return usagef("--policy %s: the recorded policy has no settings to sweep", sim.RecordedName)
	case sw.resume && sw.of.out == "":
		return usagef("--resume needs --out DIR, the sweep to continue")
	}
	specs, err := resolvePolicies(sw.sf.policies, sw.sf.sets)
	if err != nil {
		return err
	}
	base := *specs[0].config
	axes, err := parseGrid(sw.grid, sw.sf.sets, base)
	if err != nil {
		return err
	}
	if sw.plots != "" && len(axes) != 2 {
		return usagef("--plots: the heatmaps need exactly two --grid keys, got %d", len(axes))
	}
	points, err := gridPoints(base, axes)
	if err != nil {
		return err
	}
	st, err := sw.sf.setup()
	if err != nil {
		return err
	}
	sessions, err := sw.wf.load(e, sw.sf.seed)
	if err != nil {
		return err
	}
	var jr *journal
	done := map[string][]report.RunSummary{}
	if sw.of.out != "" {
		id, err := sweepIdentity(sw.fs, sw.sf.prices, points, sessions)
		if err != nil {
			return err
		}
		jr, done, err = openJournal(e, sw.of.out, sw.resume, sweepMeta{Format: sweepFormat, Identity: id, Base: base.Name, Grid: metaGrid(axes)})
		if err != nil {
			return err
		}
		defer jr.close()
	}
	st.memo.Warm(sessions)
	cells, err := buildCells(st, groupSessions(sessions), points)
	if err != nil {
		return err
	}
	if sw.resume {
		n := 0
		for _, c := range cells {
			if _, ok := done[cellKey(c)]; ok {
				n++
			}
		}
		fmt.Fprintf(e.stderr, "ctxsim sweep: resuming %s: %d of %d cells done, %d to run\n", sw.of.out, n, len(cells), len(cells)-n)
	}
	results, cellErr := runSweepCells(st, cells, done, jr, sw.sf.jobs, e.stderr)
	if errors.Is(cellErr, errSweepKilled) || (jr != nil && jr.failed(cellErr)) {
		// Killed, or cells.jsonl cannot be written: stop without a summary,
		// as a crash would, so the journal stays the one record.
		return cellErr
	}

	// Runs in cell order (grid order, then group order), then by trace.
	rank := map[string]int{}
	for i, p := range points {
		rank[p.name] = i
	}
	var runs []report.RunSummary
	for _, rs := range results {
		runs = append(runs, rs...)
	}
	sortStable(runs, func(a, b report.RunSummary) bool {
		if rank[a.Policy] != rank[b.Policy] {
			return rank[a.Policy] < rank[b.Policy]
		}
		return a.Trace < b.Trace
	})
	if jr != nil {
		if err := report.WriteFileAtomic(filepath.Join(sw.of.out, "summary.json"), func(w io.Writer) error {
			return report.WriteResults(w, report.Results{Runs: runs})
		}); err != nil {
			return err
		}
	}
	var m *sweepMatrix
	if len(axes) == 2 {
		m = newSweepMatrix(axes, points, runs)
	}
	if sw.plots != "" {
		if err := m.writeHeatmaps(sw.plots); err != nil {
			return err
		}
	}
	if format == report.JSON {
		if err := report.WriteResults(e.stdout, report.Results{Runs: runs}); err != nil {
			return err
		}
		return cellErr
	}
	// The table groups rows by trace, as compare's does, so the cheapest
	// cell of each trace stands out.
	byTrace := append([]report.RunSummary(nil), runs...)
	sortRuns(byTrace, points)
	title := fmt.Sprintf("Sweep of %s over %s (%d cells)", base.Name, axisNames(axes), len(points))
	if err := report.WriteRuns(e.stdout, format, byTrace, report.RunsOptions{Title: title}); err != nil {
		return err
	}
	if m != nil && (format == report.Text || format == report.Markdown) {
		fmt.Fprintln(e.stdout)
		if err := m.table().Write(e.stdout, format); err != nil {
			return err
		}
	}
	return cellErr
}

func axisNames(axes []gridAxis) string {
	names := make([]string, len(axes))
	for i, ax := range axes {
		names[i] = ax.key
	}
	return strings.Join(names, " × ")
}

// cellKey identifies a cell in cells.jsonl: its grid point and its tenant.
func cellKey(c *cell) string { return c.spec.name + "\x00" + c.g.key }

// runSweepCells runs the cells not in done on jobs workers, appending each
// to jr as soon as it finishes (whatever order that is), and returns every
// cell's runs in cell order. A cell that fails is reported on stderr and
// left out; the error at the end counts them.
func runSweepCells(st *simSetup, cells []*cell, done map[string][]report.RunSummary, jr *journal, jobs int, stderr io.Writer) ([][]report.RunSummary, error) {
	results := make([][]report.RunSummary, len(cells))
	var jl []sim.Job
	var at []int
	var killed atomic.Bool
	for i, c := range cells {
		if rs, ok := done[cellKey(c)]; ok {
			results[i] = rs
			continue
		}
		jl = append(jl, sim.Job{Key: c.g.key + "/" + c.pol.Name, Do: func() (any, error) {
			if killed.Load() {
				return nil, errSweepKilled
			}
			res, err := st.runCell(c.g, c.pol, c.aux)
			if err != nil {
				return nil, err
			}
			if jr != nil {
				if err := jr.append(c, res.runs); err != nil {
					if errors.Is(err, errSweepKilled) {
						killed.Store(true)
					}
					return nil, err
				}
			}
			return res, nil
		}})
		at = append(at, i)
	}
	bar := newProgress(stderr, len(jl))
	var first error
	failed := 0
	sim.Pool(jl, jobs, func(d sim.Done) {
		bar.Add(1)
		switch {
		case first != nil:
		case errors.Is(d.Err, errSweepKilled):
			first = d.Err
		case d.Err != nil && jr != nil && jr.failed(d.Err):
			first = d.Err
		case d.Err != nil:
			failed++
			fmt.Fprintf(stderr, "ctxsim: cell %s: %v\n", d.Key, d.Err)
		default:
			results[at[d.Index]] = d.Value.(*cellResult).runs
		}
	})
	bar.Finish()
	if first == nil && failed > 0 {
		first = fmt.Errorf("%d of %d cells failed (see above)", failed, len(cells))
	}
	return results, first
}

// sweepFormat names the layout of sweep.json and cells.jsonl.
const sweepFormat = "ctxsim-sweep/1"

// sweepMeta is sweep.json.
type sweepMeta struct {
	Format   string        `json:"format"`
	Identity sweepIdent    `json:"identity"`
	Base     string        `json:"base"`
	Grid     []sweepAxisJS `json:"grid"`
}

type sweepAxisJS struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

func metaGrid(axes []gridAxis) []sweepAxisJS {
	out := make([]sweepAxisJS, len(axes))
	for i, ax := range axes {
		out[i] = sweepAxisJS{ax.key, ax.values}
	}
	return out
}

// sweepIdent is what identifies a sweep's results, in parts so that a
// refused --resume can say which one differs. The ctxsim build is not in
// it: resuming with a changed binary mixes its results.
type sweepIdent struct {
	// Cells hashes every cell's name and full settings, in grid order.
	Cells string `json:"cells"`
	// Flags are the other flags as name=value: every flag but those that
	// cannot change a result (notIdentity) and those the other parts cover.
	// A flag added later is in it by default, which is the safe side.
	Flags []string `json:"flags"`
	// Prices hashes the --prices file's content.
	Prices string `json:"prices,omitempty"`
	// Workload hashes every session replayed, in the native format.
	Workload string `json:"workload"`
	// Sessions is the number of sessions, for the error message.
	Sessions int `json:"sessions"`
}

// notIdentity are the flags left out of sweepIdent.Flags: output and
// parallelism, and the grid, policy, workload and prices flags, which are
// hashed by their effect (the cells' settings, the sessions, the file).
var notIdentity = map[string]bool{
	"jobs": true, "json": true, "format": true, "out": true, "resume": true, "plots": true, "help": true,
	"grid": true, "policy": true, "set": true,
	"trace": true, "profile": true, "sessions": true, "from": true, "prices": true,
}

func sweepIdentity(fs *pflag.FlagSet, prices string, points []policySpec, sessions []*traces.Session) (sweepIdent, error) {
	var id sweepIdent
	sum := func(d *xxhash.Digest) string { return hex.EncodeToString(d.Sum(nil)) }
	cells := xxhash.New()
	for _, p := range points {
		fmt.Fprintf(cells, "cell %q\n", p.name)
		for _, s := range p.config.Settings() {
			fmt.Fprintf(cells, "%s=%q\n", s.Key, s.Value)
		}
	}
	id.Cells = sum(cells)
	fs.VisitAll(func(f *pflag.Flag) {
		if !notIdentity[f.Name] {
			id.Flags = append(id.Flags, f.Name+"="+f.Value.String())
		}
	})
	if prices != "" {
		b, err := os.ReadFile(prices)
		if err != nil {
			return sweepIdent{}, fmt.Errorf("--prices: %w", err)
		}
		id.Prices = strconv.FormatUint(xxhash.Sum64(b), 16)
	}
	wl := xxhash.New()
	for _, s := range sessions {
		// Tenant and format decide grouping and filtering; the native
		// writer may not carry them.
		fmt.Fprintf(wl, "session %q tenant=%q format=%q\n", s.ID, s.Tenant, s.Format)
		if err := traces.WriteSession(wl, s); err != nil {
			return sweepIdent{}, fmt.Errorf("hash session %s: %w", s.ID, err)
		}
	}
	id.Workload, id.Sessions = sum(wl), len(sessions)
	return id, nil
}

// diff says what differs between the sweep on disk (a) and this one (b),
// or "".
func (a sweepIdent) diff(b sweepIdent) string {
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
		return "the --prices file differs"
	}
	if a.Workload != b.Workload {
		return fmt.Sprintf("the workload differs (%d sessions then, %d now, or their content)", a.Sessions, b.Sessions)
	}
	return ""
}

// A journal is cells.jsonl open for appending.
type journal struct {
	path string
	mu   sync.Mutex
	f    *os.File
	n    int
	err  error
}

// A journalLine is one line of cells.jsonl: one run of one cell. A cell's
// lines are written in one write and count as done only when all Of of them
// are present; a cell with no root sessions writes one line without a run.
type journalLine struct {
	Cell   string             `json:"cell"`
	Tenant string             `json:"tenant"`
	Of     int                `json:"of"`
	Run    *report.RunSummary `json:"run,omitempty"`
}

// openJournal prepares dir for a sweep with meta. A fresh sweep writes
// sweep.json and an empty cells.jsonl; a resumed one checks sweep.json,
// reads the finished cells and rewrites cells.jsonl without any torn or
// incomplete tail, so appends start on a line boundary.
func openJournal(e *env, dir string, resume bool, meta sweepMeta) (*journal, map[string][]report.RunSummary, error) {
	metaPath := filepath.Join(dir, "sweep.json")
	path := filepath.Join(dir, "cells.jsonl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	done := map[string][]report.RunSummary{}
	_, statErr := os.Stat(path)
	have := statErr == nil
	old, err := os.ReadFile(metaPath)
	switch {
	case err == nil && resume:
		var was sweepMeta
		if err := json.Unmarshal(old, &was); err != nil || was.Format != sweepFormat {
			return nil, nil, fmt.Errorf("%s: not a %s file", metaPath, sweepFormat)
		}
		if d := was.Identity.diff(meta.Identity); d != "" {
			return nil, nil, fmt.Errorf("--resume: the sweep in %s is another one: %s; rerun it with the same flags, or sweep into a new --out", dir, d)
		}
		if have {
			lines, err := readJournal(e, path)
			if err != nil {
				return nil, nil, err
			}
			done = completeCells(lines)
			if err := report.WriteFileAtomic(path, func(w io.Writer) error {
				enc := json.NewEncoder(w)
				for _, l := range lines {
					if _, ok := done[l.Cell+"\x00"+l.Tenant]; ok {
						if err := enc.Encode(l); err != nil {
							return err
						}
					}
				}
				return nil
			}); err != nil {
				return nil, nil, err
			}
		}
	case err == nil || have:
		if resume {
			return nil, nil, fmt.Errorf("--resume: %s has cells.jsonl but no sweep.json; cannot tell which sweep it holds", dir)
		}
		return nil, nil, fmt.Errorf("--out %s already holds a sweep: add --resume to continue it, or remove it", dir)
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, err
	default:
		if err := report.WriteFileAtomic(metaPath, func(w io.Writer) error {
			return writeJSON(w, meta)
		}); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return &journal{path: path, f: f}, done, nil
}

// readJournal reads cells.jsonl. A last line without its newline is an
// interrupted write: it is dropped with a warning. Any other bad line is an
// error naming it.
func readJournal(e *env, path string) ([]journalLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []journalLine
	rest := b
	for line := 1; len(rest) > 0; line++ {
		text, tail, complete := bytes.Cut(rest, []byte("\n"))
		rest = tail
		var l journalLine
		err := json.Unmarshal(text, &l)
		if err == nil && (l.Cell == "" || l.Tenant == "" || l.Of < 0 || (l.Of > 0) != (l.Run != nil)) {
			err = errors.New("missing cell, tenant, of or run")
		}
		if err != nil {
			if !complete {
				fmt.Fprintf(e.stderr, "ctxsim sweep: %s:%d: dropped the last line, cut short by an interrupted write; its cell runs again\n", path, line)
				break
			}
			return nil, &traces.SyntaxError{File: path, Line: line, Msg: err.Error()}
		}
		out = append(out, l)
	}
	return out, nil
}

// completeCells keeps the cells all of whose lines are present, each with
// its runs in the order written. A cell journaled twice (it cannot be, but
// a hand-edited file might) keeps its first complete copy.
func completeCells(lines []journalLine) map[string][]report.RunSummary {
	type acc struct {
		of   int
		runs []report.RunSummary
		n    int
	}
	m := map[string]*acc{}
	done := map[string][]report.RunSummary{}
	for _, l := range lines {
		k := l.Cell + "\x00" + l.Tenant
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

// append writes c's runs as one write and syncs them.
func (j *journal) append(c *cell, runs []report.RunSummary) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	l := journalLine{Cell: c.spec.name, Tenant: c.g.key, Of: len(runs)}
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
	data := buf.Bytes()
	if k := sweepKill.after; k > 0 && j.n >= k {
		if sweepKill.torn {
			data = data[:len(data)/2]
			j.f.Write(data)
		}
		j.err = errSweepKilled
		return j.err
	}
	if _, err := j.f.Write(data); err != nil {
		j.err = fmt.Errorf("write %s: %w", j.path, err)
		return j.err
	}
	if err := j.f.Sync(); err != nil {
		j.err = fmt.Errorf("sync %s: %w", j.path, err)
		return j.err
	}
	j.n++
	return nil
}

// failed reports whether err is the journal's own failure, which stops the
// sweep: results that cannot be saved should not be computed.
func (j *journal) failed(err error) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err != nil && errors.Is(err, j.err)
}

func (j *journal) close() error { return j.f.Close() }

// sweepMatrix is a two-key sweep's totals: rows the first key's values,
// columns the second's.
type sweepMatrix struct {
	axes      [2]gridAxis
	cost      [][]float64
	read, all [][]int64
	ran       [][]bool
	traces    int
}

// countNoun is "1 trace", "2 traces".
func countNoun(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func newSweepMatrix(axes []gridAxis, points []policySpec, runs []report.RunSummary) *sweepMatrix {
	m := &sweepMatrix{axes: [2]gridAxis{axes[0], axes[1]}}
	nr, nc := len(axes[0].values), len(axes[1].values)
	at := map[string][2]int{}
	for i, p := range points {
		at[p.name] = [2]int{i / nc, i % nc} // gridPoints varies the last key fastest
	}
	m.cost = make([][]float64, nr)
	m.read, m.all = make([][]int64, nr), make([][]int64, nr)
	m.ran = make([][]bool, nr)
	for i := range nr {
		m.cost[i] = make([]float64, nc)
		m.read[i], m.all[i] = make([]int64, nc), make([]int64, nc)
		m.ran[i] = make([]bool, nc)
	}
	seen := map[string]bool{}
	for _, r := range runs {
		rc := at[r.Policy]
		m.cost[rc[0]][rc[1]] += r.CostUSD
		m.read[rc[0]][rc[1]] += r.Tokens.CacheRead
		m.all[rc[0]][rc[1]] += r.Tokens.Prompt()
		m.ran[rc[0]][rc[1]] = true
		seen[r.Trace] = true
	}
	m.traces = len(seen)
	return m
}

// table is the cost matrix, the cheapest cell marked.
func (m *sweepMatrix) table() *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("Total cost $ over %s: rows %s, columns %s (* cheapest)", countNoun(m.traces, "trace"), m.axes[0].key, m.axes[1].key),
		Columns: []string{m.axes[0].short + " \\ " + m.axes[1].short},
		Right:   []bool{false},
	}
	bi, bj := -1, -1
	for i := range m.cost {
		for j := range m.cost[i] {
			if m.ran[i][j] && (bi < 0 || m.cost[i][j] < m.cost[bi][bj]) {
				bi, bj = i, j
			}
		}
	}
	for _, v := range m.axes[1].values {
		t.Columns = append(t.Columns, v)
		t.Right = append(t.Right, true)
	}
	for i, v := range m.axes[0].values {
		row := []string{v}
		for j := range m.cost[i] {
			c := ""
			if m.ran[i][j] {
				c = usd4(m.cost[i][j])
				if i == bi && j == bj {
					c += " *"
				}
			}
			row = append(row, c)
		}
		t.AddRow(row...)
	}
	return t
}

// axisCoords places an axis's values on a heatmap axis. A heatmap cell
// spans the midpoints to its neighbours, so only evenly spaced values draw
// even cells under their labels: evenly spaced increasing numbers are used
// as they are, evenly spaced durations in minutes, and anything else sits at
// 0, 1, 2... with the values named in the axis label.
func axisCoords(ax gridAxis) ([]float64, string) {
	parse := func(f func(string) (float64, bool)) []float64 {
		out := make([]float64, len(ax.values))
		for i, v := range ax.values {
			x, ok := f(v)
			if !ok || (i > 0 && x <= out[i-1]) {
				return nil
			}
			if i > 1 && math.Abs((x-out[i-1])-(out[1]-out[0])) > 1e-9*math.Abs(x) {
				return nil
			}
			out[i] = x
		}
		return out
	}
	if xs := parse(func(s string) (float64, bool) {
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	}); xs != nil {
		return xs, ax.key
	}
	if xs := parse(func(s string) (float64, bool) {
		d, err := time.ParseDuration(s)
		return d.Minutes(), err == nil
	}); xs != nil {
		return xs, ax.key + " (minutes)"
	}
	xs := make([]float64, len(ax.values))
	names := make([]string, len(ax.values))
	for i, v := range ax.values {
		xs[i] = float64(i)
		names[i] = fmt.Sprintf("%d=%s", i, v)
	}
	return xs, ax.key + " (" + strings.Join(names, ", ") + ")"
}

// writeHeatmaps writes sweep-cost and sweep-hit-rate to dir. A cell that
// did not run shows 0.
func (m *sweepMatrix) writeHeatmaps(dir string) error {
	ys, yname := axisCoords(m.axes[0])
	xs, xname := axisCoords(m.axes[1])
	hit := make([][]float64, len(m.cost))
	for i := range m.cost {
		hit[i] = make([]float64, len(m.cost[i]))
		for j := range m.cost[i] {
			if m.all[i][j] > 0 {
				hit[i][j] = 100 * float64(m.read[i][j]) / float64(m.all[i][j])
			}
		}
	}
	var figs []report.Figure
	for _, f := range []struct {
		name, title, z string
		zs             [][]float64
	}{
		{"sweep-cost", fmt.Sprintf("Total cost over %s", countNoun(m.traces, "trace")), "cost $", m.cost},
		{"sweep-hit-rate", fmt.Sprintf("Cache hit rate over %s (token-weighted)", countNoun(m.traces, "trace")), "hit %", hit},
	} {
		fig, err := report.HeatmapFigure(f.name, f.title, &report.Grid{XName: xname, YName: yname, ZName: f.z, Xs: xs, Ys: ys, Zs: f.zs})
		if err != nil {
			return err
		}
		figs = append(figs, fig)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFigures(dir, figs)
}

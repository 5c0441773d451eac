package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// A Plan is the cells of a run that one shard owns (all of them,
// unsharded), each with its place in the unsharded run, and the shard's
// part of the output as its cells finish.
type Plan struct {
	Spec  Spec
	Cells []*experiment.Cell
	// Parts are the finished cells, for WritePart.
	Parts []Cell

	order map[*experiment.Cell][]int
	unit  func(experiment.Spec, experiment.Tenant) string
}

// TenantUnit is a cell's identity for the runs sharded by tenant
// (compare, fidelity): its tenant.
func TenantUnit(_ experiment.Spec, t experiment.Tenant) string { return t.Key }

// CellUnit is a cell's identity for the runs sharded by cell (sweep,
// whatif): its policy and its tenant.
func CellUnit(spec experiment.Spec, t experiment.Tenant) string {
	return spec.Name + "\x00" + t.Key
}

// NewPlan pairs tenants with specs as experiment.Setup.Cells does
// (spec-major, tenants in order), keeping for a shard the cells whose unit
// it owns, each with its place in the unsharded run: [spec index, tenant
// index]. The tenants kept are read in full (stubs, when set) before their
// cells are built, since a cell needs to know whether its tenant recorded
// usage. Unsharded, the cells are Cells itself.
func NewPlan(ctx context.Context, st *experiment.Setup, stubs *Stubs, all []experiment.Tenant, specs []experiment.Spec, sp Spec,
	unit func(experiment.Spec, experiment.Tenant) string) (*Plan, error) {
	p := &Plan{Spec: sp, unit: unit, order: map[*experiment.Cell][]int{}}
	if !sp.Sharded() {
		cells, err := st.Cells(all, specs)
		p.Cells = cells
		return p, err
	}
	for i, s := range specs {
		var mine []experiment.Tenant
		var at []int
		for j, t := range all {
			if sp.Owns(unit(s, t)) {
				mine, at = append(mine, t), append(at, j)
				if stubs != nil {
					if err := stubs.Fill(ctx, t.Sessions); err != nil {
						return nil, err
					}
				}
			}
		}
		cs, err := st.Cells(mine, []experiment.Spec{s})
		if err != nil {
			return nil, err
		}
		k := 0
		for _, c := range cs {
			for mine[k].Key != c.Tenant.Key {
				k++
			}
			p.Cells = append(p.Cells, c)
			p.order[c] = []int{i, at[k]}
		}
	}
	return p, nil
}

// Keep keeps the cells keep says yes to.
func (p *Plan) Keep(keep func(*experiment.Cell) bool) {
	out := p.Cells[:0]
	for _, c := range p.Cells {
		if keep(c) {
			out = append(out, c)
		}
	}
	p.Cells = out
}

// CellData is what merge needs of a cell besides its runs: for
// runs.parquet and the suite table, each run's tenant and workload; for
// report.html, the price of the cell's first call.
type CellData struct {
	Tenant    string            `json:"tenant"`
	Workloads map[string]string `json:"workloads,omitempty"`
	// FirstModel is the model of the cell's first call record; Price its
	// price, nil when the rate card has none.
	FirstModel string         `json:"first_model,omitempty"`
	Price      *pricing.Price `json:"price,omitempty"`
}

// Add records a finished cell, with the first nrec of its records, at its
// place in the unsharded run; unsharded, it does nothing.
func (p *Plan) Add(c *experiment.Cell, card *pricing.Card, nrec int) error {
	if !p.Spec.Sharded() {
		return nil
	}
	d := CellData{Tenant: c.Tenant.Key, Workloads: map[string]string{}}
	for _, r := range c.Tenant.Roots {
		d.Workloads[r.ID] = experiment.Workload(r)
	}
	if nrec > 0 {
		for _, r := range c.Result.Records {
			if r.Kind == sim.KindCall && r.Model != "" {
				d.FirstModel = r.Model
				if pr, err := card.Lookup(r.Model); err == nil {
					d.Price = &pr
				}
				break
			}
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	p.Parts = append(p.Parts, Cell{Order: p.order[c], Unit: p.unit(c.Spec, c.Tenant), Runs: c.Result.Runs, Records: nrec, Data: b})
	return nil
}

// WritePart writes a shard's cells to dir and then its manifest, with the
// run's warnings, which marks the shard complete: a shard that failed has
// none, and merge refuses it. Unsharded (sp zero), it does nothing.
func WritePart(dir string, sp Spec, cells []Cell, m Manifest, warnings []traces.Warning) error {
	if !sp.Sharded() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteCells(dir, cells); err != nil {
		return err
	}
	m.Shard = sp.String()
	m.Warnings = warnings
	return WriteManifest(dir, m)
}

// NewManifest is the identity of a sharded run of command: its flags
// (name=value, the output-only ones left out), the seed, the inputs'
// hashes and this build's version; render is what merge needs to print.
func NewManifest(command string, seed uint64, flags []string, inputs []Input, render any) (Manifest, error) {
	m := Manifest{Version: BuildVersion(), Command: command, Seed: seed, Inputs: inputs, Flags: flags}
	b, err := json.Marshal(render)
	m.Render = b
	return m, err
}

// BuildVersion names the build: module version and VCS revision, so that
// shards of different builds do not merge.
func BuildVersion() string {
	b := ctxsim.ThisBuild()
	if !b.Known {
		return "unknown"
	}
	v := b.Version
	if b.Revision != "" {
		v += " " + b.Revision
	}
	if b.Modified {
		v += " modified"
	}
	return v
}

// ErrStdin is Inputs' refusal of standard input: every shard must read
// the same input.
var ErrStdin = errors.New("--shard cannot read standard input: every shard must read the same input")

// Inputs hashes what a run reads: each --trace path's files (or the
// embedded suite) and the --prices file.
func Inputs(paths []string, suite bool, prices string) ([]Input, error) {
	var out []Input
	if suite {
		h, err := HashFiles(ctxsim.Recorded(), ".")
		if err != nil {
			return nil, err
		}
		out = append(out, Input{Name: "embedded suite", Hash: h})
	}
	for _, p := range paths {
		if p == "-" {
			return nil, ErrStdin
		}
		h, err := HashPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, Input{Name: "--trace " + p, Hash: h})
	}
	if prices != "" {
		h, err := HashPath(prices)
		if err != nil {
			return nil, err
		}
		out = append(out, Input{Name: "--prices", Hash: h})
	}
	return out, nil
}

// PricesHash is the hash of the --prices file the run priced with (Inputs),
// "" for the embedded rate card.
func (m Manifest) PricesHash() string {
	for _, in := range m.Inputs {
		if in.Name == "--prices" {
			return in.Hash
		}
	}
	return ""
}

// HashPath hashes the file or tree at p; Clean first, so "traces/" is
// the directory traces, not an entry "traces" inside it.
func HashPath(p string) (string, error) {
	p = filepath.Clean(p)
	return HashFiles(os.DirFS(filepath.Dir(p)), filepath.Base(p))
}

// Labels reads merged cells' data: each run's tenant and workload, the
// workload of every root session, and the price of the run's first call
// (that of the first cell that made one).
func Labels(cells []Cell) (map[string]experiment.Label, map[string]string, *pricing.Price, error) {
	labels := map[string]experiment.Label{}
	wl := map[string]string{}
	var price *pricing.Price
	priced := false
	for _, c := range cells {
		var d CellData
		if err := json.Unmarshal(c.Data, &d); err != nil {
			return nil, nil, nil, fmt.Errorf("cell %s: data: %v", c.Unit, err)
		}
		for id, w := range d.Workloads {
			wl[id] = w
			labels[id] = experiment.Label{Tenant: d.Tenant, Workload: w}
		}
		if !priced && d.FirstModel != "" {
			price, priced = d.Price, true
		}
	}
	return labels, wl, price, nil
}

// Outputs are a merged run's outputs: its runs in cell order, its records,
// the cells' labels, and the warnings of the first shard's manifest.
func (m *Merged) Outputs(title string, labels map[string]experiment.Label, workloads map[string]string, price *pricing.Price, warnings []traces.Warning) (*experiment.Outputs, error) {
	recs, err := m.Records()
	if err != nil {
		return nil, err
	}
	return &experiment.Outputs{Title: title, Seed: m.Manifest.Seed, Runs: m.Runs(), Records: recs, Labels: labels, Workloads: workloads, Price: price, Warnings: warnings}, nil
}

// Run replays the plan's cells (experiment.Setup.Each, with journal j
// when set) and records each that ran as a part of the shard (Add), with
// its records when records is true; emit sees each such cell in cell
// order. Of the errors, a stop (ctx cancelled, a journal write failed)
// comes first, then a part that could not be recorded, then
// *experiment.CellsFailed: the others' results stand.
func (p *Plan) Run(ctx context.Context, st *experiment.Setup, workers int, j *experiment.Journal, records bool, done, failed, emit func(*experiment.Cell)) error {
	var addErr error
	err := st.Each(ctx, p.Cells, workers, j, done, failed, func(c *experiment.Cell) {
		emit(c)
		n := 0
		if records {
			n = len(c.Result.Records)
		}
		if addErr == nil {
			addErr = p.Add(c, st.Prices, n)
		}
		if !records {
			// Not kept: the records go now rather than at the end of
			// the run, so a run's memory does not grow by every cell's.
			c.Result.Records = nil
		}
	})
	if failedErr := (*experiment.CellsFailed)(nil); err != nil && !errors.As(err, &failedErr) {
		return err
	}
	if addErr != nil {
		return addErr
	}
	return err
}

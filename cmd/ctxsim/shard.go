package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/pflag"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// shardFlags is --shard K/N, and where a sharded run's cells go.
type shardFlags struct {
	spec  string
	sp    shard.Spec
	cells []shard.Cell
}

func (f *shardFlags) flag(fs *pflag.FlagSet, unit string) {
	fs.StringVar(&f.spec, "shard", "", "run only shard K of N (1 ≤ K ≤ N): the "+unit+" whose identity hashes there; needs --out; ctxsim merge joins the shards (docs/scale.md)")
}

// parse checks --shard; a shard needs an output directory for merge.
func (f *shardFlags) parse(out string) error {
	sp, err := shard.Parse(f.spec)
	if err != nil {
		return usagef("%v", err)
	}
	if sp.Sharded() && out == "" {
		return usagef("--shard needs --out DIR: a shard writes its part there, for ctxsim merge")
	}
	f.sp = sp
	return nil
}

// cellData is what merge needs of a cell besides its runs: for
// runs.parquet and the suite table, each run's tenant and workload; for
// report.html, the price of the cell's first call.
type cellData struct {
	Tenant    string            `json:"tenant"`
	Workloads map[string]string `json:"workloads,omitempty"`
	// FirstModel is the model of the cell's first call record; Price its
	// price, nil when the rate card has none.
	FirstModel string         `json:"first_model,omitempty"`
	Price      *pricing.Price `json:"price,omitempty"`
}

// cell records a finished cell at its place in the unsharded run.
func (f *shardFlags) cell(order []int, unit string, c *experiment.Cell, st *experiment.Setup, nrec int) error {
	if !f.sp.Sharded() {
		return nil
	}
	d := cellData{Tenant: c.Tenant.Key, Workloads: map[string]string{}}
	for _, r := range c.Tenant.Roots {
		d.Workloads[r.ID] = experiment.Workload(r)
	}
	if nrec > 0 {
		for _, r := range c.Result.Records {
			if r.Kind == sim.KindCall && r.Model != "" {
				d.FirstModel = r.Model
				if p, err := st.Prices.Lookup(r.Model); err == nil {
					d.Price = &p
				}
				break
			}
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	f.cells = append(f.cells, shard.Cell{Order: order, Unit: unit, Runs: c.Result.Runs, Records: nrec, Data: b})
	return nil
}

// write writes the shard's cells and then its manifest, with the run's
// warnings, which marks the shard complete: a shard that failed has none,
// and merge refuses it.
func (f *shardFlags) write(dir string, m shard.Manifest, warnings []traces.Warning) error {
	if !f.sp.Sharded() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := shard.WriteCells(dir, f.cells); err != nil {
		return err
	}
	m.Shard = f.sp.String()
	m.Warnings = warnings
	return shard.WriteManifest(dir, m)
}

// outputOnly are the flags that change neither a result nor the table's
// content: left out of a shard's manifest, so shards may differ in them.
var outputOnly = map[string]bool{
	"out": true, "jobs": true, "shard": true, "format": true, "json": true, "help": true, "plots": true, "resume": true,
}

// manifest is the identity of a sharded run of command: every other flag,
// the seed, and the inputs' hashes.
func manifest(fs *pflag.FlagSet, command string, seed uint64, inputs []shard.Input, render any) (shard.Manifest, error) {
	m := shard.Manifest{Version: buildVersion(), Command: command, Seed: seed, Inputs: inputs}
	fs.VisitAll(func(fl *pflag.Flag) {
		if !outputOnly[fl.Name] {
			m.Flags = append(m.Flags, fl.Name+"="+fl.Value.String())
		}
	})
	b, err := json.Marshal(render)
	m.Render = b
	return m, err
}

// buildVersion names the build: module version and VCS revision, so that
// shards of different builds do not merge.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " modified"
			}
		}
	}
	return v
}

// inputs hashes what a run reads: each --trace path's files (or the
// embedded suite) and the --prices file.
func inputs(paths []string, suite bool, prices string) ([]shard.Input, error) {
	var out []shard.Input
	if suite {
		h, err := shard.HashFiles(ctxsim.Recorded(), ".")
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: "embedded suite", Hash: h})
	}
	for _, p := range paths {
		if p == "-" {
			return nil, usagef("--shard cannot read standard input: every shard must read the same input")
		}
		h, err := hashPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: "--trace " + p, Hash: h})
	}
	if prices != "" {
		h, err := hashPath(prices)
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: "--prices", Hash: h})
	}
	return out, nil
}

// hashPath hashes the file or tree at p; Clean first, so "traces/" is
// the directory traces, not an entry "traces" inside it.
func hashPath(p string) (string, error) {
	p = filepath.Clean(p)
	return shard.HashFiles(os.DirFS(filepath.Dir(p)), filepath.Base(p))
}

// openTraces is loadTraces for a shard: native traces by header only
// (shard.Open), so that only the owned tenants are ever read in full.
func openTraces(e *env, paths []string, from string, sp shard.Spec) ([]*traces.Session, *shard.Stubs, *traces.Warnings, error) {
	if !sp.Sharded() {
		ss, w, err := loadTraces(e, paths, from)
		return ss, nil, w, err
	}
	ss, stubs, w, err := shard.Open(e.ctx, paths, traces.OpenOptions{Formats: formats.All(), From: from, Stdin: e.stdin})
	if err != nil {
		return nil, nil, nil, fromError(err)
	}
	return keepCalls(e, ss, w, stubs.Stub), stubs, w, nil
}

// shardCells pairs tenants with specs as experiment.Setup.Cells does
// (spec-major, tenants in order), keeping for a shard the cells whose unit
// it owns, each with its place in the unsharded run: [spec index, tenant
// index]. The tenants kept are read in full (stubs) before their cells are
// built, since a cell needs to know whether its tenant recorded usage.
// Unsharded, it is Cells itself, and order is nil.
func shardCells(e *env, st *experiment.Setup, stubs *shard.Stubs, all []experiment.Tenant, specs []experiment.Spec, sp shard.Spec,
	unit func(experiment.Spec, experiment.Tenant) string) (cells []*experiment.Cell, order [][]int, err error) {
	if !sp.Sharded() {
		cells, err = st.Cells(all, specs)
		return cells, nil, err
	}
	for i, s := range specs {
		var mine []experiment.Tenant
		var at []int
		for j, t := range all {
			if sp.Owns(unit(s, t)) {
				mine, at = append(mine, t), append(at, j)
				if stubs != nil {
					if err := stubs.Fill(e.ctx, t.Sessions); err != nil {
						return nil, nil, err
					}
				}
			}
		}
		cs, err := st.Cells(mine, []experiment.Spec{s})
		if err != nil {
			return nil, nil, err
		}
		k := 0
		for _, c := range cs {
			for mine[k].Key != c.Tenant.Key {
				k++
			}
			cells = append(cells, c)
			order = append(order, []int{i, at[k]})
		}
	}
	return cells, order, nil
}

// cellUnit is a cell's identity for the commands sharded by cell (sweep,
// whatif): its policy and its tenant.
func cellUnit(spec experiment.Spec, t experiment.Tenant) string {
	return spec.Name + "\x00" + t.Key
}

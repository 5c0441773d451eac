package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
)

// A Plan is the cells of a run: every tenant paired with every policy,
// policy-major, or for a shard the cells it owns, each with its place in
// the unsharded run. A shard is a filter on the plan: nothing else of a run
// knows it is sharded. As its cells run, a sharded plan keeps each as an
// entry of the shard's part (Entries, for shard.WriteDir).
type Plan struct {
	Shard   shard.Spec
	Cells   []*Cell
	Entries []shard.Entry

	order map[*Cell][]int
	unit  func(Policy, Tenant) string
}

// PlanOptions say which cells of a run a plan keeps.
type PlanOptions struct {
	// Shard, when sharded, keeps the cells whose unit (Unit) it owns.
	Shard shard.Spec
	// Unit names a cell's work unit, what a shard owns: ByTenant (the
	// default) or ByCell.
	Unit func(Policy, Tenant) string
	// Stubs are sessions read by header only (traces.OpenOptions.Stubs):
	// the tenants a shard keeps are read in full before their cells are
	// built, since a cell needs to know whether its tenant recorded usage.
	Stubs *traces.Stubs
}

// ByTenant is a cell's unit for the runs sharded by tenant (compare,
// fidelity): its tenant.
func ByTenant(_ Policy, t Tenant) string { return t.Key }

// ByCell is a cell's unit for the runs sharded by cell (sweep, whatif):
// its policy and its tenant.
func ByCell(p Policy, t Tenant) string { return p.Name + "\x00" + t.Key }

// Plan pairs tenants with policies, policy-major; a policy that needs
// recorded usage (the recorded policy and its variants) only with tenants
// that carry it. A runner that fails Check plans nothing.
func (r *Runner) Plan(ctx context.Context, tenants []Tenant, policies []Policy, o PlanOptions) (*Plan, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if o.Unit == nil {
		o.Unit = ByTenant
	}
	p := &Plan{Shard: o.Shard, unit: o.Unit, order: map[*Cell][]int{}}
	for i, pol := range policies {
		built, aux, err := r.build(pol)
		if err != nil {
			return nil, err
		}
		for j, t := range tenants {
			if !o.Shard.Owns(o.Unit(pol, t)) {
				continue
			}
			if o.Stubs != nil {
				if err := o.Stubs.Fill(ctx, t.Sessions); err != nil {
					return nil, err
				}
			}
			if pol.needsRecorded() && !t.HasRecorded() {
				continue
			}
			if err := r.fits(pol, t); err != nil {
				return nil, err
			}
			c := &Cell{Tenant: t, Policy: pol, sim: built, summaryModel: aux}
			p.Cells = append(p.Cells, c)
			p.order[c] = []int{i, j}
		}
	}
	return p, nil
}

// fits refuses the as-sent policy on a tenant not captured, and a policy
// whose settings a session of t cannot run under (a
// model.max_tokens that leaves its model's window no room, which the
// threshold would drop in silence): a usage error naming the setting
// before any work, rather than every cell failing on it.
func (r *Runner) fits(pol Policy, t Tenant) error {
	if pol.Name == assent.Name {
		for _, s := range t.Sessions {
			if s.Format != capture.FormatName {
				return badInput("{policy} %s replays captured requests ({log format} capture): session %s is a %s log", pol.Name, s.ID, s.Format)
			}
		}
	}
	if pol.Config == nil {
		return nil
	}
	for _, s := range t.Sessions {
		w := s.Window
		if w == 0 {
			p, err := r.Prices.Lookup(s.Model)
			if err != nil {
				continue // the cell reports the unpriced model
			}
			w = p.Window
		}
		if err := pol.Config.Validate(w); err != nil {
			return badInput("{policy} %s, for session %s (%s, a %d-token window): %v", pol.Name, s.ID, s.Model, w, err)
		}
	}
	return nil
}

// Keep keeps the cells keep says yes to.
func (p *Plan) Keep(keep func(*Cell) bool) {
	out := p.Cells[:0]
	for _, c := range p.Cells {
		if keep(c) {
			out = append(out, c)
		}
	}
	p.Cells = out
}

// entryData is what merge needs of a cell besides its runs: for
// runs.parquet and the suite table, each run's tenant and workload; for
// report.html, the price of the cell's first call.
type entryData struct {
	Tenant    string            `json:"tenant"`
	Workloads map[string]string `json:"workloads,omitempty"`
	// FirstModel is the model of the cell's first call record; Price its
	// price, nil when the rate card has none.
	FirstModel string         `json:"first_model,omitempty"`
	Price      *pricing.Price `json:"price,omitempty"`
}

// add keeps a finished cell as an entry of a sharded plan's part, with
// its records when records (they go to the shard's records.jsonl);
// unsharded, it does nothing.
func (p *Plan) add(c *Cell, card *pricing.Card, records bool) error {
	if !p.Shard.Sharded() {
		return nil
	}
	d := entryData{Tenant: c.Tenant.Key, Workloads: map[string]string{}}
	for _, r := range c.Tenant.Roots {
		d.Workloads[r.ID] = WorkloadOf(r)
	}
	nrec := 0
	if records {
		nrec = len(c.Result.Records)
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
	var runs json.RawMessage
	if len(c.Result.Runs) > 0 {
		if runs, err = json.Marshal(c.Result.Runs); err != nil {
			return err
		}
	}
	p.Entries = append(p.Entries, shard.Entry{Order: p.order[c], Unit: p.unit(c.Policy, c.Tenant), Runs: runs, Records: nrec, Data: b})
	return nil
}

// entryLabels reads merged entries' data: each run's tenant and workload,
// the workload of every root session, and the price of the run's first
// call (that of the first cell that made one).
func entryLabels(entries []shard.Entry) (map[string]Label, map[string]string, *pricing.Price, error) {
	labels := map[string]Label{}
	wl := map[string]string{}
	var price *pricing.Price
	priced := false
	for _, e := range entries {
		var d entryData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil, nil, nil, fmt.Errorf("cell %s: data: %v", e.Unit, err)
		}
		for id, w := range d.Workloads {
			wl[id] = w
			labels[id] = Label{Tenant: d.Tenant, Workload: w}
		}
		if !priced && d.FirstModel != "" {
			price, priced = d.Price, true
		}
	}
	return labels, wl, price, nil
}

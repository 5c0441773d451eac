package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// A Cell is one (tenant, policy) replay of an experiment. Run fills in
// Result, or Err when the cell cannot run (a floor larger than the
// window); one failed cell does not stop the others.
type Cell struct {
	Tenant Tenant
	Policy Policy
	Result *Result
	Err    error

	// sim is Policy built for the engine, and summaryModel the model its
	// summaries are written by.
	sim          *sim.Policy
	summaryModel string
}

// Key names the cell in messages: "tenant/policy".
func (c *Cell) Key() string { return c.Tenant.Key + "/" + c.sim.Name }

// A Result is a cell's records and its runs: one summary per root session
// of the tenant.
type Result struct {
	Records []sim.Record
	Runs    []results.RunSummary
	// Tape and Hindsight are the requests the tenant's provider received
	// and their hindsight optimum, when Runner.Hindsight is set and the
	// provider is Anthropic's.
	Tape      []hindsight.Call
	Hindsight *hindsight.Result
}

func (rn *Runner) runCell(ctx context.Context, c *Cell) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.Policy.Name == assent.Name {
		return rn.asSent(ctx, c.Tenant)
	}
	if !c.Tenant.HasRecorded() {
		return rn.replay(ctx, c.Tenant, c.sim, c.summaryModel, nil, rn.hindsightFor(c.sim.Name))
	}
	// Each anchored replay runs when a cell first needs it: every policy
	// but recorded honours observed re-sends and sizes blocks with the
	// recorded-observed calibrators, so whatif and a compare without the
	// recorded policy never run the recorded one.
	rt := rn.recordedTenant(c.Tenant)
	if c.sim.ObserveResends {
		if err := rn.observedRun(ctx, c.Tenant, rt); err != nil {
			return nil, err
		}
		if c.sim.Name == sim.RecordedObservedName {
			// This cell alone (one per tenant) solves the tape the
			// observed run left.
			res := rt.observed
			if res.Tape != nil && res.Hindsight == nil {
				if err := rn.hindsight(ctx, c.Tenant, res, res.Tape); err != nil {
					return nil, err
				}
			}
			return res, nil
		}
		return rn.replay(ctx, c.Tenant, c.sim, c.summaryModel, func(s *traces.Session) *sim.Calibrator { return rt.frozenObs[s.ID] }, rn.hindsightFor(c.sim.Name))
	}
	if err := rn.calibrated(ctx, c.Tenant, rt); err != nil {
		return nil, err
	}
	if c.sim.Recorded && c.sim.Name == sim.RecordedName {
		return rt.result, nil
	}
	return rn.replay(ctx, c.Tenant, c.sim, c.summaryModel, func(s *traces.Session) *sim.Calibrator { return rt.frozen[s.ID] }, rn.hindsightFor(c.sim.Name))
}

// asSent replays t's captured requests as they were sent (package
// sim/assent): every session's calls, in time order, on the tenant's own
// providers, summarized as every other policy's runs are.
func (rn *Runner) asSent(ctx context.Context, t Tenant) (*Result, error) {
	rep, err := assent.Replay(ctx, t.Sessions, assent.Options{Prices: rn.Prices, Seed: rn.Seed})
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.Key, err)
	}
	return &Result{Records: rep.Records, Runs: rn.summarize(t, assent.Name, rep.Records)}, nil
}

// observedRun runs (once per tenant) the recorded-observed policy: the
// anchored replay that honours observed re-sends, whose frozen calibrators
// carry them to the what-if variants. A cancelled attempt is not kept.
func (rn *Runner) observedRun(ctx context.Context, t Tenant, rt *recordedTenant) error {
	rt.obsMu.Lock()
	defer rt.obsMu.Unlock()
	if rt.obsDone {
		return rt.obsErr
	}
	cals := map[string]*sim.Calibrator{}
	// Taped, not solved: every other cell of the tenant waits for the
	// frozen calibrators, not for the optimum, which the policy's own
	// cell solves (runCell).
	res, err := rn.replayTaped(ctx, t, sim.NewRecordedObserved(), "", func(s *traces.Session) *sim.Calibrator {
		c := sim.NewCalibrator(s, rn.Tokens).ObserveResends()
		cals[s.ID] = c
		return c
	}, rn.hindsightFor(sim.RecordedObservedName), false)
	rt.observed, rt.obsErr = res, err
	rt.obsDone = ctx.Err() == nil || !errors.Is(err, ctx.Err())
	if err == nil {
		rt.frozenObs = map[string]*sim.Calibrator{}
		for id, c := range cals {
			rt.frozenObs[id] = c.Freeze()
		}
	}
	return err
}

// recordedTenant is what a tenant with recorded usage is anchored on: the
// recorded policy's anchored replay (which is also that policy's cell) and
// the recorded-observed one, each with the frozen calibrators later
// policies size the same sessions with. The two are independent and each
// has its own lock, so they can run side by side.
type recordedTenant struct {
	mu     sync.Mutex
	done   bool
	result *Result
	frozen map[string]*sim.Calibrator
	err    error

	obsMu     sync.Mutex
	obsDone   bool
	observed  *Result
	frozenObs map[string]*sim.Calibrator
	obsErr    error
}

// recordedTenant is t's anchors, made on first use and run on demand.
func (rn *Runner) recordedTenant(t Tenant) *recordedTenant {
	v, _ := rn.recorded.LoadOrStore(t.Key, &recordedTenant{})
	return v.(*recordedTenant)
}

// calibrated runs (once per tenant) the recorded policy anchored on the
// billed calls and, unless SkipOpenLoop, open loop (markOpenLoop). A
// cancelled attempt is not kept: the next caller tries again.
func (rn *Runner) calibrated(ctx context.Context, t Tenant, rt *recordedTenant) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.done {
		return rt.err
	}
	rt.result, rt.frozen, rt.err = rn.calibrate(ctx, t)
	rt.done = ctx.Err() == nil || !errors.Is(rt.err, ctx.Err())
	return rt.err
}

func (rn *Runner) calibrate(ctx context.Context, t Tenant) (*Result, map[string]*sim.Calibrator, error) {
	pol := sim.NewRecorded()
	cals := map[string]*sim.Calibrator{}
	anchored := func(s *traces.Session) *sim.Calibrator {
		c := sim.NewCalibrator(s, rn.Tokens)
		cals[s.ID] = c
		return c
	}
	res, err := rn.replay(ctx, t, pol, "", anchored, rn.hindsightFor(pol.Name))
	if err != nil {
		return nil, nil, err
	}
	if !rn.SkipOpenLoop {
		if err := rn.markOpenLoop(ctx, t, pol, res); err != nil {
			return nil, nil, err
		}
	}
	res.Runs = rn.summarize(t, pol.Name, res.Records)
	res.regret(t)
	frozen := map[string]*sim.Calibrator{}
	for id, c := range cals {
		frozen[id] = c.Freeze()
	}
	return res, frozen, nil
}

// markOpenLoop replays t open loop, from a fit on each session's first 20%
// of calls, and marks each call record of res (the anchored replay) with
// the open-loop prediction (estimate "open_loop") and whether the call was
// in the fit prefix.
func (rn *Runner) markOpenLoop(ctx context.Context, t Tenant, pol *sim.Policy, res *Result) error {
	prefix := map[string]int{}
	open := func(s *traces.Session) *sim.Calibrator {
		cal, n := sim.FitPrefix(s, rn.Tokens, 0.2)
		prefix[s.ID] = n
		return sim.NewOpenLoop(s, rn.Tokens, cal)
	}
	ol, err := rn.replay(ctx, t, pol, "", open, false)
	if err != nil {
		return err
	}
	type key struct {
		trace string
		event int
	}
	pred := map[key]int{}
	for _, r := range ol.Records {
		if r.Kind == sim.KindCall {
			pred[key{r.Trace, r.Event}] = r.Prompt
		}
	}
	nth := map[string]int{}
	for i := range res.Records {
		r := &res.Records[i]
		if r.Kind != sim.KindCall || r.Recorded == nil {
			continue
		}
		if p, ok := pred[key{r.Trace, r.Event}]; ok {
			r.Estimates = append(r.Estimates, estimate.Estimate{Name: sim.EstimateOpenLoop, Tokens: p})
		}
		if nth[r.Trace] < prefix[r.Trace] {
			r.SetDetail(sim.DetailFitPrefix, 1)
		}
		nth[r.Trace]++
	}
	return nil
}

// replay runs t under pol; calibrate, when set, sizes recorded sessions;
// hs computes the hindsight optimum of the run's requests.
func (rn *Runner) replay(ctx context.Context, t Tenant, pol *sim.Policy, summaryModel string, calibrate func(*traces.Session) *sim.Calibrator, hs bool) (*Result, error) {
	return rn.replayTaped(ctx, t, pol, summaryModel, calibrate, hs, hs)
}

// replayTaped is replay; with hs and not solve it tapes the requests
// (Result.Tape) and leaves the optimum to the caller.
func (rn *Runner) replayTaped(ctx context.Context, t Tenant, pol *sim.Policy, summaryModel string, calibrate func(*traces.Session) *sim.Calibrator, hs, solve bool) (*Result, error) {
	var tape *hindsight.Tape
	// With server-side editing the billed prompt is not the request: the
	// schedule's choices are not the caller's alone.
	hs = hs && !rn.ClearToolUses
	var prov provider.Provider
	if names := rn.providersFor(t); len(names) > 1 {
		// One account's sessions on several providers (Claude Code and
		// Codex logs together): each request goes to its model's
		// provider; hindsight covers the Anthropic calls.
		prov = &provider.Router{
			For: func(model string) string {
				name, ok := rn.providerOf(model)
				if !ok {
					return names[0]
				}
				return name
			},
			New: func(name string) (provider.Provider, error) {
				p, err := rn.newProvider(name, t.Key, t.blocks())
				if err == nil && hs && name == "anthropic" {
					tape = &hindsight.Tape{Inner: p}
					p = tape
				}
				return p, err
			},
		}
	} else {
		p, err := rn.newProvider(rn.ProviderFor(t), t.Key, t.blocks())
		if err != nil {
			return nil, err
		}
		if hs && rn.ProviderFor(t) == "anthropic" {
			tape = &hindsight.Tape{Inner: p}
			p = tape
		}
		prov = p
	}
	opts := rn.options(pol, summaryModel)
	accounts := map[string]provider.Provider{}
	defer func() {
		// The run is over: the providers' caches go to the next replay.
		provider.Release(prov)
		for _, p := range accounts {
			provider.Release(p)
		}
	}()
	opts.Account = func(a string) provider.Provider {
		if accounts[a] == nil {
			// Another account of the same user: same provider, own cache.
			p, err := rn.newProvider(rn.ProviderFor(t), t.Key+"/"+a, 0)
			if err != nil {
				p = prov // the name resolved once already; cannot fail here
			}
			accounts[a] = p
		}
		return accounts[a]
	}
	if calibrate != nil {
		opts.Calibrate = calibrate
		opts.Prewarm = true
	}
	if p := rn.progress; p != nil {
		opts.Finished = func() { p.Replayed(1) }
	}
	sessions := t.Sessions
	if !pol.Recorded {
		// The recorded harness's own compaction calls belong to its
		// compactions; another policy compacts (or not) by itself.
		sessions = nil
		for _, s := range t.Sessions {
			if s.Format != claudecode.FormatCompaction {
				sessions = append(sessions, s)
			}
		}
	}
	results, err := sim.RunTenant(ctx, sessions, pol, prov, opts)
	if err != nil {
		return nil, err
	}
	all := sim.TakeRecords(results) // nil when there are none, as before
	out := &Result{Records: all, Runs: rn.summarize(t, pol.Name, all)}
	if tape != nil {
		out.Tape = tape.Calls
		if !solve {
			return out, nil
		}
		if err := rn.hindsight(ctx, t, out, tape.Calls); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hindsight solves the tape of a replay and sets each run's regret: the
// run's calls on the tape priced under the optimum instead of as billed.
func (rn *Runner) hindsight(ctx context.Context, t Tenant, res *Result, calls []hindsight.Call) error {
	opts := hindsight.Options{Prices: rn.Prices, Crew: rn.crew}
	if p := rn.progress; p != nil {
		var end func()
		opts.Progress, end = solvedRoots(t, calls, p)
		defer end()
	}
	h, err := rn.optimum(ctx, t, calls, opts)
	if err != nil {
		return fmt.Errorf("tenant %s: %w", t.Key, err)
	}
	res.Tape, res.Hindsight = calls, h
	res.regret(t)
	return nil
}

// optimum is the hindsight optimum of calls, separated by root when t has
// several (each root's row must be a bill its own sessions could have
// reached: no root above what its policy schedule paid). It comes from
// rn.SolveStore when that holds it, else it is solved and kept there; what
// is kept is the separated optimum, so the grouping is part of its key.
func (rn *Runner) optimum(ctx context.Context, t Tenant, calls []hindsight.Call, opts hindsight.Options) (*hindsight.Result, error) {
	var group func(string) string
	var parts []string
	if len(t.Roots) > 1 {
		rootOf := t.rootOf()
		group = func(k string) string { return rootOf[strings.TrimSuffix(k, "/compaction")] }
	}
	var key hindsight.Key
	keyed := false
	if rn.SolveStore != nil {
		if group != nil {
			parts = append(parts, "separate")
			seen := map[string]bool{}
			for i := range calls {
				if k := calls[i].Key; !seen[k] {
					seen[k] = true
					parts = append(parts, k, group(k))
				}
			}
		}
		if k, err := hindsight.KeyOf(calls, opts, parts...); err == nil {
			if h, ok := rn.SolveStore.Get(k); ok {
				return h, nil
			}
			key, keyed = k, true
		}
	}
	h, err := rn.optima.Solve(ctx, calls, opts)
	if err != nil {
		return nil, err
	}
	if group != nil {
		if _, err := hindsight.Separate(calls, h, group, opts); err != nil {
			return nil, err
		}
	}
	if keyed {
		rn.SolveStore.Put(key, h)
	}
	return h, nil
}

// regret sets each run's hindsight summary from res.Hindsight.
func (res *Result) regret(t Tenant) {
	h, calls := res.Hindsight, res.Tape
	if h == nil {
		return
	}
	rootOf := t.rootOf()
	for i := range res.Runs {
		r := &res.Runs[i]
		mine := func(key string) bool {
			// A forked summary's key is "<session>/compaction".
			return rootOf[strings.TrimSuffix(key, "/compaction")] == r.Trace
		}
		policy := hindsight.KeyCost(calls, h.PolicyCost, mine)
		r.Hindsight = results.NewHindsight(r.CostUSD, policy, hindsight.KeyCost(calls, h.Cost, mine), h.Exact)
		if len(t.Roots) == 1 {
			r.Hindsight.SetBound(r.CostUSD - policy + h.BoundUSD)
		}
		if h.Capped > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("hindsight: the search's states were cut on %d calls to stay within its memory bound (docs/performance.md); its schedule is not proven optimal", h.Capped))
		}
	}
}

// ordered reports whether every record of all is root's, numbered by its
// position, in time order: what summarize would make of them.
func ordered(all []sim.Record, root string) bool {
	for i := range all {
		if all[i].Trace != root || all[i].Seq != i || i > 0 && all[i].Time.Before(all[i-1].Time) {
			return false
		}
	}
	return true
}

// bills is what the provider billed each root of t, its subagents
// included, as their logs record it (results.Options.Bill): every call
// with recorded usage, priced as the engine prices it (by the model in
// force: the call's, else the last one named, else the session's), whether
// or not the replay could send it. A call a log copied from another
// session (traces.MetaCopied: a resume's copy of the conversation it
// continues) is that session's history, billed there, not here.
func (rn *Runner) bills(t Tenant) map[string]*results.Bill {
	rootOf := t.rootOf()
	out := map[string]*results.Bill{}
	prices := map[string]*pricing.Price{}
	for _, s := range t.Sessions {
		model := s.Model
		for i := range s.Events {
			e := &s.Events[i]
			if e.Kind != traces.Assistant {
				continue
			}
			if e.Model != "" {
				model = e.Model
			}
			if e.Usage == nil || e.Meta[traces.MetaCopied] == "true" {
				continue
			}
			b := out[rootOf[s.ID]]
			if b == nil {
				b = &results.Bill{}
				out[rootOf[s.ID]] = b
			}
			b.Calls++
			b.Tokens = b.Tokens.Add(*e.Usage)
			p, seen := prices[model]
			if !seen {
				if pr, err := rn.Prices.Lookup(model); err == nil {
					p = &pr
				}
				prices[model] = p
			}
			if p != nil {
				b.CostUSD += p.Cost(*e.Usage)
			}
		}
	}
	return out
}

var rootRecords = sync.Pool{New: func() any { return new([]sim.Record) }}

// summarize makes one row per root session of t. A root's row covers its
// subagents: their records join its own in time order, renumbered, under
// its name.
func (rn *Runner) summarize(t Tenant, policy string, all []sim.Record) []results.RunSummary {
	bills := rn.bills(t)
	opts := func(root string) results.Options { return results.Options{Prices: rn.Prices, Bill: bills[root]} }
	if len(t.Roots) == 1 && ordered(all, t.Roots[0].ID) {
		// One session, its records already in time order and numbered:
		// the regrouped copy would be all itself (a Record is large).
		return []results.RunSummary{withFormat(results.Summarize(t.Roots[0].ID, policy, all, opts(t.Roots[0].ID)), t.Roots[0])}
	}
	rootOf := t.rootOf()
	byRoot := map[string][]int{} // indices into all: a Record is large, copy it once
	for i := range all {
		root := rootOf[all[i].Trace]
		byRoot[root] = append(byRoot[root], i)
	}
	var out []results.RunSummary
	// One scratch list for every root and every replay of the process:
	// results.Summarize keeps nothing of it. Cleared when put back, so the
	// pool holds no replay's records alive.
	buf := rootRecords.Get().(*[]sim.Record)
	used := 0 // the most of buf any root used: the part to clear
	defer func() {
		clear((*buf)[:used])
		rootRecords.Put(buf)
	}()
	for _, r := range t.Roots {
		idx := byRoot[r.ID]
		recs := (*buf)[:0]
		for _, i := range idx {
			recs = append(recs, all[i])
		}
		*buf, used = recs, max(used, len(recs))
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
		for i := range recs {
			recs[i].Trace, recs[i].Seq = r.ID, i
		}
		out = append(out, withFormat(results.Summarize(r.ID, policy, recs, opts(r.ID)), r))
	}
	return out
}

// withFormat names the log format, harness version and model a run's
// fidelity is of.
func withFormat(s results.RunSummary, root *traces.Session) results.RunSummary {
	if s.Fidelity != nil {
		s.Fidelity.Format, s.Fidelity.Harness, s.Fidelity.Model = root.Format, root.Harness, root.Model
	}
	return s
}

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// A group is sessions replayed together against one provider: a tenant. A
// root session and its subagents always share one; recorded sessions loaded
// from one path share one too, as they share one account's cache.
type group struct {
	key      string
	sessions []*traces.Session
	// roots are the sessions rows are reported for; a child's records are
	// summarized under its root.
	roots []*traces.Session
}

// groupSessions groups sessions by tenant, in first-seen order.
func groupSessions(ss []*traces.Session) []group {
	byID := map[string]*traces.Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	root := func(s *traces.Session) *traces.Session {
		for s.Parent != "" {
			p, ok := byID[s.Parent]
			if !ok {
				break
			}
			s = p
		}
		return s
	}
	idx := map[string]int{}
	var out []group
	for _, s := range ss {
		r := root(s)
		key := r.TenantID()
		if s.Tenant != "" {
			key = s.Tenant
		}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, group{key: key})
		}
		out[i].sessions = append(out[i].sessions, s)
		if r == s {
			out[i].roots = append(out[i].roots, s)
		}
	}
	return out
}

// rootOf maps every session of g to the root it is reported under.
func (g *group) rootOf() map[string]string {
	m := map[string]string{}
	for _, r := range g.roots {
		m[r.ID] = r.ID
	}
	for changed := true; changed; {
		changed = false
		for _, s := range g.sessions {
			if _, ok := m[s.ID]; ok {
				continue
			}
			if r, ok := m[s.Parent]; ok {
				m[s.ID] = r
				changed = true
			}
		}
	}
	for _, s := range g.sessions {
		if _, ok := m[s.ID]; !ok {
			m[s.ID] = s.ID
		}
	}
	return m
}

// simSetup is what every replay of one command shares.
type simSetup struct {
	prices   *pricing.Card
	memo     *estimate.Memo
	provider string
	seed     uint64
	// summarizerFail is the injected summarizer failure rate, providerErr
	// the injected transient provider error rate.
	summarizerFail, providerErr float64
	// clearToolUses turns on Anthropic's server-side context editing.
	clearToolUses bool
	// recordedGroups holds each recorded group's calibration, by group key.
	recordedGroups sync.Map
}

// loadCard is the embedded rate card, overridden by a LiteLLM file.
func loadCard(prices string) (*pricing.Card, error) {
	card := pricing.Default()
	if prices == "" {
		return card, nil
	}
	fh, err := os.Open(prices)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	defer fh.Close()
	if err := card.LoadLiteLLM(fh, prices); err != nil {
		return nil, err
	}
	return card, nil
}

func newSetup(pricesFile, providerName string, seed uint64) (*simSetup, error) {
	card, err := loadCard(pricesFile)
	if err != nil {
		return nil, err
	}
	tok, err := estimate.Tiktoken("o200k_base")
	if err != nil {
		return nil, err
	}
	return &simSetup{prices: card, memo: estimate.Shared(tok), provider: providerName, seed: seed}, nil
}

// stream derives a run's random stream from the seed and the cell's names,
// so a cell's randomness does not depend on which other cells run.
func (st *simSetup) stream(parts ...string) *rand.Rand {
	return rand.New(rand.NewPCG(st.seed, traces.HashString(strings.Join(parts, "\x00"))))
}

// providerFor names the fake provider of a group: the --provider flag, or
// with "auto" the provider of the group's first priced model (anthropic for
// Claude, openai for GPT, deepseek for DeepSeek), so a Codex log replays
// against OpenAI's automatic cache.
func (st *simSetup) providerFor(g group) string {
	if st.provider != "" && st.provider != "auto" {
		return st.provider
	}
	for _, s := range g.sessions {
		model := s.Model
		for i := 0; model == "" && i < len(s.Events); i++ {
			model = s.Events[i].Model
		}
		if p, err := st.prices.Lookup(model); err == nil && p.Provider != "" {
			if slices.Contains(provider.Names(), p.Provider) {
				return p.Provider
			}
		}
	}
	return "anthropic"
}

func (st *simSetup) newProvider(name, tenant string) (provider.Provider, error) {
	o := provider.Options{Common: provider.Common{Prices: st.prices}}
	// The provider's randomness (OpenAI's idle eviction, injected faults)
	// is drawn from the seed and the tenant only: every policy meets the
	// same provider (common random numbers), so a difference between two
	// policies is the policies', not the dice's.
	o.OpenAI.Rand = st.stream("provider", tenant)
	if st.clearToolUses {
		c := provider.DefaultClearToolUses()
		o.Anthropic.ClearToolUses = &c
	}
	p, err := provider.ByName(name, o)
	if err != nil || st.providerErr == 0 {
		return p, err
	}
	return &provider.Faulty{Inner: p, Rate: st.providerErr, Rand: st.stream("faults", tenant)}, nil
}

func (st *simSetup) options(pol *sim.Policy, summaryModel string) sim.Options {
	o := sim.Options{Prices: st.prices, Count: st.memo.Count, SummarizerModel: summaryModel}
	o.Summarizer = func(s *traces.Session) compact.Summarizer {
		model := summaryModel
		if model == "" {
			model = s.Model
		}
		return &sim.Summarizer{
			Model:    model,
			Count:    st.memo.CountText,
			Latency:  provider.DefaultLatency("anthropic", model),
			FailRate: st.summarizerFail,
			Rand:     st.stream("summarizer", s.ID, pol.Name),
		}
	}
	return o
}

// A cellResult is one (group, policy) replay, summarized per root session.
type cellResult struct {
	records []sim.Record
	runs    []report.RunSummary
}

// recordedGroup is the calibration of a group with recorded usage: the
// recorded policy's anchored replay (which is also that policy's cell) and
// the frozen calibrators every other policy sizes the same sessions with.
type recordedGroup struct {
	once   sync.Once
	result *cellResult
	frozen map[string]*sim.Calibrator
	err    error
}

// recorded runs (once per group) the recorded policy anchored on the billed
// calls, and open-loop from a fit on each session's first 20% of calls, and
// marks each call record with the open-loop prediction (estimate
// "open_loop") and whether the call was in the fit prefix.
func (st *simSetup) recorded(g group) (*recordedGroup, error) {
	v, _ := st.recordedGroups.LoadOrStore(g.key, &recordedGroup{})
	rg := v.(*recordedGroup)
	rg.once.Do(func() {
		pol := sim.NewRecorded()
		cals := map[string]*sim.Calibrator{}
		anchored := func(s *traces.Session) *sim.Calibrator {
			c := sim.NewCalibrator(s, st.memo)
			cals[s.ID] = c
			return c
		}
		res, err := st.replay(g, pol, "", anchored)
		if err != nil {
			rg.err = err
			return
		}
		type key struct {
			trace string
			event int
		}
		prefix := map[string]int{}
		open := func(s *traces.Session) *sim.Calibrator {
			cal, n := sim.FitPrefix(s, st.memo, 0.2)
			prefix[s.ID] = n
			return sim.NewOpenLoop(s, st.memo, cal)
		}
		ol, err := st.replay(g, pol, "", open)
		if err != nil {
			rg.err = err
			return
		}
		pred := map[key]int{}
		for _, r := range ol.records {
			if r.Kind == sim.KindCall {
				pred[key{r.Trace, r.Event}] = r.Prompt
			}
		}
		nth := map[string]int{}
		for i := range res.records {
			r := &res.records[i]
			if r.Kind != sim.KindCall || r.Recorded == nil {
				continue
			}
			if p, ok := pred[key{r.Trace, r.Event}]; ok {
				r.Estimates = append(r.Estimates, estimate.Estimate{Name: report.EstimateOpenLoop, Tokens: p})
			}
			if nth[r.Trace] < prefix[r.Trace] {
				r.Detail = append(r.Detail, sim.KV{Key: report.DetailFitPrefix, Value: 1})
			}
			nth[r.Trace]++
		}
		res.runs = st.summarize(g, pol.Name, res.records)
		rg.result = res
		rg.frozen = map[string]*sim.Calibrator{}
		for id, c := range cals {
			rg.frozen[id] = c.Freeze()
		}
	})
	return rg, rg.err
}

// runCell replays group g under one policy. Groups with recorded usage are
// sized by the calibration of their recorded replay.
func (st *simSetup) runCell(g group, pol *sim.Policy, summaryModel string) (*cellResult, error) {
	if !g.hasRecorded() {
		return st.replay(g, pol, summaryModel, nil)
	}
	rg, err := st.recorded(g)
	if err != nil {
		return nil, err
	}
	if pol.Recorded && pol.Name == sim.RecordedName {
		return rg.result, nil
	}
	return st.replay(g, pol, summaryModel, func(s *traces.Session) *sim.Calibrator { return rg.frozen[s.ID] })
}

// replay runs g under pol; calibrate, when set, sizes recorded sessions.
func (st *simSetup) replay(g group, pol *sim.Policy, summaryModel string, calibrate func(*traces.Session) *sim.Calibrator) (*cellResult, error) {
	prov, err := st.newProvider(st.providerFor(g), g.key)
	if err != nil {
		return nil, err
	}
	opts := st.options(pol, summaryModel)
	accounts := map[string]provider.Provider{}
	opts.Account = func(a string) provider.Provider {
		if accounts[a] == nil {
			// Another account of the same user: same provider, own cache.
			p, err := st.newProvider(st.providerFor(g), g.key+"/"+a)
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
	sessions := g.sessions
	if !pol.Recorded {
		// The recorded harness's own compaction calls belong to its
		// compactions; another policy compacts (or not) by itself.
		sessions = nil
		for _, s := range g.sessions {
			if s.Format != claudecode.FormatCompaction {
				sessions = append(sessions, s)
			}
		}
	}
	results, err := sim.RunTenant(sessions, pol, prov, opts)
	if err != nil {
		return nil, err
	}
	var all []sim.Record
	for _, res := range results {
		all = append(all, res.Records...)
	}
	return &cellResult{records: all, runs: st.summarize(g, pol.Name, all)}, nil
}

// summarize makes one row per root session of g. A root's row covers its
// subagents: their records join its own in time order, renumbered, under
// its name.
func (st *simSetup) summarize(g group, policy string, all []sim.Record) []report.RunSummary {
	rootOf := g.rootOf()
	byRoot := map[string][]sim.Record{}
	for _, r := range all {
		byRoot[rootOf[r.Trace]] = append(byRoot[rootOf[r.Trace]], r)
	}
	var out []report.RunSummary
	for _, r := range g.roots {
		recs := append([]sim.Record(nil), byRoot[r.ID]...)
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
		for i := range recs {
			recs[i].Trace, recs[i].Seq = r.ID, i
		}
		out = append(out, report.Summarize(r.ID, policy, recs, report.Options{Prices: st.prices}))
	}
	return out
}

// policySpec is a policy as named on the command line: a preset, the
// recorded policy, or a config file, with --set overrides applied.
type policySpec struct {
	name   string
	config *policies.Config // nil for the recorded policy
	// onRecorded makes the policy a variant of the recorded one: config's
	// TTL and compaction rungs on top of what the log shows (whatif).
	onRecorded bool
	// ttl overrides the recorded tier of an onRecorded variant.
	ttl string
}

// isPolicyFile reports whether a --policy name is a policy file.
func isPolicyFile(n string) bool {
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json")
}

// applySets applies --set KEY=VALUE overrides to c, in order.
func applySets(c *policies.Config, sets []string) error {
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--set %q: want KEY=VALUE", kv)
		}
		if err := c.Set(k, v); err != nil {
			return usagef("--set %s: %v", kv, err)
		}
	}
	return nil
}

func resolvePolicies(names []string, sets []string) ([]policySpec, error) {
	var out []policySpec
	for _, n := range names {
		if n == sim.RecordedName {
			if len(sets) > 0 {
				return nil, usagef("--set does not apply to the recorded policy")
			}
			out = append(out, policySpec{name: n})
			continue
		}
		var cfg policies.Config
		if isPolicyFile(n) {
			f, err := os.Open(n)
			if err != nil {
				return nil, fmt.Errorf("--policy %s: %w", n, err)
			}
			c, _, err := policies.Load(f, n)
			f.Close()
			if err != nil {
				return nil, err
			}
			cfg = c
			if cfg.Name == "" {
				cfg.Name = strings.TrimSuffix(filepath.Base(n), filepath.Ext(n))
			}
		} else {
			c, err := policies.Preset(n)
			if err != nil {
				return nil, usagef("--policy %q: not a preset, %q or a .yaml/.json policy file (presets: %s)", n, sim.RecordedName, strings.Join(policies.PresetNames(), ", "))
			}
			cfg = c
		}
		if err := applySets(&cfg, sets); err != nil {
			return nil, err
		}
		c := cfg
		out = append(out, policySpec{name: cfg.Name, config: &c})
	}
	return out, nil
}

func (st *simSetup) build(p policySpec) (*sim.Policy, string, error) {
	if p.onRecorded {
		pol, err := sim.NewRecordedVariant(p.name, *p.config, p.ttl, st.memo)
		return pol, p.config.SummaryModel, err
	}
	if p.config == nil {
		return sim.NewRecorded(), "", nil
	}
	pol, err := sim.NewPolicy(*p.config, st.memo)
	if err != nil {
		return nil, "", err
	}
	if m := p.config.SummaryModel; m != "" {
		// An unpriced summarizer would make every compaction free.
		if _, err := st.prices.Lookup(m); err != nil {
			return nil, "", fmt.Errorf("policy %s: auxiliary.compression.model: %w", p.name, err)
		}
	}
	return pol, p.config.SummaryModel, nil
}

// hasRecorded reports whether any session of g carries recorded usage.
func (g *group) hasRecorded() bool {
	for _, s := range g.sessions {
		for i := range s.Events {
			if s.Events[i].Usage != nil {
				return true
			}
		}
	}
	return false
}

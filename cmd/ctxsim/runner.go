package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
	tok      estimate.Tokenizer
	provider string
	seed     uint64
	// summarizerFail is the injected summarizer failure rate.
	summarizerFail float64
}

func newSetup(pricesFile, providerName string, seed uint64) (*simSetup, error) {
	card := pricing.Default()
	if pricesFile != "" {
		f, err := os.Open(pricesFile)
		if err != nil {
			return nil, fmt.Errorf("--prices: %w", err)
		}
		defer f.Close()
		if err := card.LoadLiteLLM(f, pricesFile); err != nil {
			return nil, err
		}
	}
	tok, err := estimate.Tiktoken("o200k_base")
	if err != nil {
		return nil, err
	}
	return &simSetup{prices: card, memo: estimate.Shared(tok), tok: tok, provider: providerName, seed: seed}, nil
}

// stream derives a run's random stream from the seed and the cell's names,
// so a cell's randomness does not depend on which other cells run.
func (st *simSetup) stream(parts ...string) *rand.Rand {
	return rand.New(rand.NewPCG(st.seed, traces.HashString(strings.Join(parts, "\x00"))))
}

func (st *simSetup) newProvider(tenant, policy string) (provider.Provider, error) {
	o := provider.Options{Common: provider.Common{Prices: st.prices}}
	o.OpenAI.Rand = st.stream("provider", tenant, policy)
	name := st.provider
	if name == "" {
		name = "anthropic"
	}
	return provider.ByName(name, o)
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
			Count:    st.tok.Count,
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

// runCell replays group g under one policy.
func (st *simSetup) runCell(g group, pol *sim.Policy, summaryModel string) (*cellResult, error) {
	prov, err := st.newProvider(g.key, pol.Name)
	if err != nil {
		return nil, err
	}
	opts := st.options(pol, summaryModel)
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
	rootOf := g.rootOf()
	byRoot := map[string][]sim.Record{}
	var all []sim.Record
	for i, res := range results {
		s := sessions[i]
		r := rootOf[s.ID]
		byRoot[r] = append(byRoot[r], res.Records...)
		all = append(all, res.Records...)
	}
	out := &cellResult{records: all}
	for _, r := range g.roots {
		// A root's row covers its subagents: their records join its own in
		// time order, renumbered, under its name.
		recs := append([]sim.Record(nil), byRoot[r.ID]...)
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
		for i := range recs {
			recs[i].Trace, recs[i].Seq = r.ID, i
		}
		out.runs = append(out.runs, report.Summarize(r.ID, pol.Name, recs, report.Options{Prices: st.prices}))
	}
	return out, nil
}

// policySpec is a policy as named on the command line: a preset, the
// recorded policy, or a config file, with --set overrides applied.
type policySpec struct {
	name   string
	config *policies.Config // nil for the recorded policy
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
		if strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".json") {
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
		for _, kv := range sets {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, usagef("--set %q: want key=value", kv)
			}
			if err := cfg.Set(k, v); err != nil {
				return nil, usagef("--set %s: %v", kv, err)
			}
		}
		c := cfg
		out = append(out, policySpec{name: cfg.Name, config: &c})
	}
	return out, nil
}

func (st *simSetup) build(p policySpec) (*sim.Policy, string, error) {
	if p.config == nil {
		return sim.NewRecorded(), "", nil
	}
	pol, err := sim.NewPolicy(*p.config, st.memo)
	if err != nil {
		return nil, "", err
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

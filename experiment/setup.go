package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/policies/estimate/tokcache"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Setup is what every replay of one experiment shares: the rate card, the
// token memo, the provider choice, the seed and the injected faults. Set
// its fields before the first Run and leave them alone after.
type Setup struct {
	Prices *pricing.Card
	Memo   *estimate.Memo
	// Provider names the fake provider; "" or "auto" picks, per tenant,
	// the provider of the first priced model (see ProviderFor).
	Provider string
	// Seed drives every random choice of a replay.
	Seed uint64
	// SummarizerFailRate is the injected summarizer failure rate,
	// ProviderErrorRate the injected transient provider error rate.
	SummarizerFailRate, ProviderErrorRate float64
	// ClearToolUses turns on Anthropic's server-side context editing.
	ClearToolUses bool
	// Hindsight computes, for every cell on the Anthropic provider without
	// ClearToolUses, the hindsight optimum of the requests it sent
	// (package sim/hindsight) and each run's regret against it.
	Hindsight bool
	// SkipOpenLoop skips the second replay of each recorded session, open
	// loop from a fit on its first calls: its predictions feed only the
	// records (estimate "open_loop", the fit-prefix mark) and the
	// open-loop fields of run summaries, which a caller that writes
	// neither (whatif's tables) does not show.
	SkipOpenLoop bool
	// SolveStore, when set, keeps hindsight optima across runs (package
	// sim/hindsight/hindcache): a cell whose tape, options and grouping it
	// holds is not solved again.
	SolveStore SolveStore
	// VLLM configures the vllm provider (KV capacity and block size);
	// zero values take provider.DefaultVLLMCapacity and its block size.
	VLLM provider.VLLMOptions

	// recorded holds each recorded tenant's calibration, by tenant key.
	recorded sync.Map
	// hashes keeps the block hashes of every session replayed, for all
	// its cells.
	hashes sim.BlockHashes
	// memo is what compaction derives from blocks, for every cell.
	memo compact.Memo
	// solved is the hindsight optimum of each distinct tape: a policy
	// that sends what another sent (a whatif variant that changes
	// nothing a session asks for) reuses its optimum. It keeps each tape
	// it solved (as the cells do) and its result.
	solved hindsight.Memo
}

// NewSetup is a setup over prices (pricing.Default() when nil) that
// counts tokens with the process-wide o200k memo, so every setup of a
// process tokenizes each distinct block once.
func NewSetup(prices *pricing.Card, providerName string, seed uint64) (*Setup, error) {
	if prices == nil {
		prices = pricing.Default()
	}
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		return nil, err
	}
	return &Setup{Prices: prices, Memo: estimate.SharedMemo(tok), Provider: providerName, Seed: seed}, nil
}

// Check refuses settings no replay can honour: a fault rate outside its
// range (at a provider error rate of 1 no call would ever get through),
// context editing on a provider other than Anthropic's, and a vLLM KV
// cache that is negative or smaller than its block. Its errors are
// *SpecError, named by the ctxsim flags that set each field.
func (st *Setup) Check() error {
	switch {
	case st.SummarizerFailRate < 0 || st.SummarizerFailRate > 1:
		return specErrorf("--summarizer-fail-rate %v: want 0..1", st.SummarizerFailRate)
	case st.ProviderErrorRate < 0 || st.ProviderErrorRate >= 1:
		return specErrorf("--provider-error-rate %v: want 0 ≤ rate < 1", st.ProviderErrorRate)
	case st.ClearToolUses && st.Provider != "anthropic" && st.Provider != "auto" && st.Provider != "":
		return specErrorf("--clear-tool-uses is an Anthropic feature (--provider %s)", st.Provider)
	}
	if v := st.VLLM; v.Capacity < 0 || v.BlockSize < 0 || (v.Capacity > 0 && v.BlockSize > v.Capacity) {
		return specErrorf("--kv-capacity %d, --block-size %d: want positive sizes, the block no larger than the cache", v.Capacity, v.BlockSize)
	}
	return nil
}

// stream derives a run's random stream from the seed and the cell's names,
// so a cell's randomness does not depend on which other cells run.
func (st *Setup) stream(parts ...string) *rand.Rand {
	return rand.New(rand.NewPCG(st.Seed, traces.HashString(strings.Join(parts, "\x00"))))
}

// ProviderFor names the fake provider of a tenant: Setup.Provider, or with
// "auto" the provider of the tenant's first priced model (anthropic for
// Claude, openai for GPT, deepseek for DeepSeek), so a Codex log replays
// against OpenAI's automatic cache. A tenant whose models belong to
// several providers is replayed through a provider.Router (see
// providersFor).
func (st *Setup) ProviderFor(t Tenant) string {
	if names := st.providersFor(t); len(names) > 0 {
		return names[0]
	}
	return "anthropic"
}

// providersFor is the providers of a tenant's priced models, in order of
// first appearance; with an explicit Setup.Provider, that one only.
func (st *Setup) providersFor(t Tenant) []string {
	if st.Provider != "" && st.Provider != "auto" {
		return []string{st.Provider}
	}
	var out []string
	for _, s := range t.Sessions {
		models := []string{s.Model}
		for i := range s.Events {
			if m := s.Events[i].Model; m != "" && m != models[len(models)-1] {
				models = append(models, m)
			}
		}
		for _, m := range models {
			if name, ok := st.providerOf(m); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// providerOf is the fake provider of a model, from the rate card.
func (st *Setup) providerOf(model string) (string, bool) {
	if model == "" {
		return "", false
	}
	p, err := st.Prices.Lookup(model)
	if err != nil || p.Provider == "" || !slices.Contains(provider.Names(), p.Provider) {
		return "", false
	}
	return p.Provider, true
}

// newProvider makes the fake provider name for tenant, whose requests hold
// about blocks distinct blocks (a size hint; 0 unknown).
func (st *Setup) newProvider(name, tenant string, blocks int) (provider.Provider, error) {
	o := provider.Options{Common: provider.Common{Prices: st.Prices, Blocks: blocks}}
	// The provider's randomness (OpenAI's idle eviction, injected faults)
	// is drawn from the seed and the tenant only: every policy meets the
	// same provider (common random numbers), so a difference between two
	// policies is the policies', not the dice's.
	o.OpenAI.Rand = st.stream("provider", tenant)
	o.VLLM = st.VLLM
	if o.VLLM.Capacity == 0 {
		o.VLLM.Capacity = provider.DefaultVLLMCapacity
	}
	if st.ClearToolUses {
		c := provider.DefaultClearToolUses()
		o.Anthropic.ClearToolUses = &c
	}
	p, err := provider.ByName(name, o)
	if err != nil || st.ProviderErrorRate == 0 {
		return p, err
	}
	return &provider.Faulty{Inner: p, Rate: st.ProviderErrorRate, Rand: st.stream("faults", tenant)}, nil
}

func (st *Setup) options(pol *sim.Policy, summaryModel string) sim.Options {
	o := sim.Options{Prices: st.Prices, Count: st.Memo.CountHash, SummarizerModel: summaryModel, Hashes: &st.hashes, Memo: &st.memo}
	o.Summarizer = func(s *traces.Session) compact.Summarizer {
		model := summaryModel
		if model == "" {
			model = s.Model
		}
		return &sim.Summarizer{
			Model:      model,
			Count:      st.Memo.CountText,
			CountParts: st.Memo.CountTexts,
			Latency:    provider.DefaultLatency("anthropic", model),
			FailRate:   st.SummarizerFailRate,
			Rand:       st.stream("summarizer", s.ID, pol.Name),
		}
	}
	return o
}

// A Spec is a policy to replay: a config (a preset, a file, a grid point),
// the recorded policy (Config nil), or a variant of the recorded policy.
type Spec struct {
	Name   string
	Config *policies.Config // nil for the recorded policy
	// OnRecorded makes the policy a variant of the recorded one: Config's
	// TTL and compaction rungs on top of what the log shows (whatif).
	OnRecorded bool
	// TTL overrides the recorded tier of an OnRecorded variant.
	TTL string
	// Warnings name the keys of the policy's file the simulator ignores
	// ("file:line: ignored ..."; policies.Load), for the caller to show.
	Warnings []string
}

// Recorded is the spec of the recorded policy: the log's own behaviour.
func Recorded() Spec { return Spec{Name: sim.RecordedName} }

// RecordedObserved is the spec of the recorded policy that honours the
// re-sends the log shows (sim.NewRecordedObserved): what-if's baseline.
func RecordedObserved() Spec { return Spec{Name: sim.RecordedObservedName} }

// Preset is the spec of a preset policy by name.
func Preset(name string) (Spec, error) {
	c, err := policies.Preset(name)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Name: c.Name, Config: &c}, nil
}

// needsRecorded reports whether the spec replays only sessions with
// recorded usage.
func (sp Spec) needsRecorded() bool { return sp.Config == nil || sp.OnRecorded }

// build makes the simulator's policy of sp and names its summary model.
func (st *Setup) build(p Spec) (*sim.Policy, string, error) {
	if p.OnRecorded {
		pol, err := sim.NewRecordedVariant(p.Name, *p.Config, p.TTL, st.Memo)
		return pol, p.Config.SummaryModel, err
	}
	if p.Config == nil {
		if p.Name == sim.RecordedObservedName {
			return sim.NewRecordedObserved(), "", nil
		}
		return sim.NewRecorded(), "", nil
	}
	pol, err := sim.NewPolicy(*p.Config, st.Memo)
	if err != nil {
		return nil, "", err
	}
	if m := p.Config.SummaryModel; m != "" {
		// An unpriced summarizer would make every compaction free.
		if _, err := st.Prices.Lookup(m); err != nil {
			return nil, "", fmt.Errorf("policy %s: auxiliary.compression.model: %w", p.Name, err)
		}
	}
	return pol, p.Config.SummaryModel, nil
}

// OwnMemo gives st a token memo of its own over o200k_base (wrapped by
// wrap, when set: the seam tests count tokenizer calls through), backed by
// the persistent count cache in dir when dir is set (package tokcache).
// flush writes the cache and returns its warnings; call it once the runs
// are done. The process-wide memo may already serve another cache or
// tokenizer, hence a memo of its own.
func (st *Setup) OwnMemo(dir string, wrap func(estimate.Tokenizer) estimate.Tokenizer) (flush func() []string, err error) {
	var tok estimate.Tokenizer
	if tok, err = tiktoken.Get("o200k_base"); err != nil {
		return nil, err
	}
	if wrap != nil {
		tok = wrap(tok)
	}
	st.Memo = estimate.NewMemo(tok)
	if dir == "" {
		return func() []string { return nil }, nil
	}
	c := tokcache.Open(dir, tok.Name(), tokcache.Options{})
	st.Memo.SetStore(c)
	return func() []string {
		c.Flush()
		return c.Warnings()
	}, nil
}

// A SolveStore keeps solved hindsight optima under their keys
// (hindsight.KeyOf); hindcache.Cache is one.
type SolveStore interface {
	Get(hindsight.Key) (*hindsight.Result, bool)
	Put(hindsight.Key, *hindsight.Result)
}

package runner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/policies/estimate/tokcache"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// A Runner replays the cells of an experiment (Plan, Run), and is what
// every replay of it shares: the rate card, the token counts, the provider
// choice, the seed and the injected faults, and what replays derive and
// keep for the next (block hashes, compaction's derived sizes, anchored
// calibrations, hindsight optima). Set its fields before the first Run and
// leave them alone after.
type Runner struct {
	Prices *pricing.Card
	// Tokens counts tokens, each distinct block once (Tokens.Warm counts a
	// workload's on all cores up front).
	Tokens *estimate.Memo
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
	// HindsightOf, when set, limits Hindsight to the cells of the policies
	// it accepts: whatif prices every policy's regret against the
	// baseline's optimum, so only the baseline's tapes need solving.
	HindsightOf func(policy string) bool
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
	// derived is what compaction derives from blocks, for every cell.
	derived compact.Memo
	// optima is the hindsight optimum of each distinct tape: a policy
	// that sends what another sent (a whatif variant that changes
	// nothing a session asks for) reuses its optimum. It keeps each tape
	// it solved (as the cells do) and its result.
	optima hindsight.Memo
	// progress is the running Run's RunOptions.Progress (nil: none).
	progress Progress
	// crew is the running Run's helpers for the optima's solves (one
	// fewer than its workers; nil: none), shared by every cell: the solve
	// the others finish before uses the cores they leave.
	crew *hindsight.Crew
}

// New is a runner over prices (pricing.Default() when nil) that counts
// tokens with the process-wide o200k memo, so every runner of a process
// tokenizes each distinct block once.
func New(prices *pricing.Card, providerName string, seed uint64) (*Runner, error) {
	if prices == nil {
		prices = pricing.Default()
	}
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		return nil, err
	}
	return &Runner{Prices: prices, Tokens: estimate.SharedMemo(tok), Provider: providerName, Seed: seed}, nil
}

// Check refuses settings no replay can honour: a fault rate outside its
// range (at a provider error rate of 1 no call would ever get through),
// context editing on a provider other than Anthropic's, and a vLLM KV
// cache that is negative or smaller than its block. Its errors are
// *InputError.
func (rn *Runner) Check() error {
	switch {
	case !numflag.Fraction.Contains(rn.SummarizerFailRate): // NaN too
		return badInput("{summarizer fail rate} %v: want 0..1", rn.SummarizerFailRate)
	case !(numflag.Range{Lo: 0, Hi: 1, OpenHi: true}).Contains(rn.ProviderErrorRate):
		return badInput("{provider error rate} %v: want 0 ≤ rate < 1", rn.ProviderErrorRate)
	case rn.ClearToolUses && rn.Provider != "anthropic" && rn.Provider != "auto" && rn.Provider != "":
		return badInput("{clear tool uses} is an Anthropic feature ({provider} %s)", rn.Provider)
	}
	if v := rn.VLLM; v.Capacity < 0 || v.BlockSize < 0 || (v.Capacity > 0 && v.BlockSize > v.Capacity) {
		return badInput("{kv capacity} %d, {block size} %d: want positive sizes, the block no larger than the cache", v.Capacity, v.BlockSize)
	}
	return nil
}

// stream derives a run's random stream from the seed and the cell's names,
// so a cell's randomness does not depend on which other cells run.
func (rn *Runner) stream(parts ...string) *rand.Rand {
	return rand.New(rand.NewPCG(rn.Seed, traces.HashString(strings.Join(parts, "\x00"))))
}

// ProviderFor names the fake provider of a tenant: Runner.Provider, or with
// "auto" the provider of the tenant's first priced model (anthropic for
// Claude, openai for GPT, deepseek for DeepSeek), so a Codex log replays
// against OpenAI's automatic cache. A tenant whose models belong to
// several providers is replayed through a provider.Router (see
// providersFor).
func (rn *Runner) ProviderFor(t Tenant) string {
	if names := rn.providersFor(t); len(names) > 0 {
		return names[0]
	}
	return "anthropic"
}

// providersFor is the providers of a tenant's priced models, in order of
// first appearance; with an explicit Runner.Provider, that one only.
func (rn *Runner) providersFor(t Tenant) []string {
	if rn.Provider != "" && rn.Provider != "auto" {
		return []string{rn.Provider}
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
			if name, ok := rn.providerOf(m); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// providerOf is the fake provider of a model, from the rate card.
func (rn *Runner) providerOf(model string) (string, bool) {
	if model == "" {
		return "", false
	}
	p, err := rn.Prices.Lookup(model)
	if err != nil || p.Provider == "" || !slices.Contains(provider.Names(), p.Provider) {
		return "", false
	}
	return p.Provider, true
}

// newProvider makes the fake provider name for tenant, whose requests hold
// about blocks distinct blocks (a size hint; 0 unknown).
func (rn *Runner) newProvider(name, tenant string, blocks int) (provider.Provider, error) {
	o := provider.Options{Common: provider.Common{Prices: rn.Prices, Blocks: blocks}}
	// The provider's randomness (OpenAI's idle eviction, injected faults)
	// is drawn from the seed and the tenant only: every policy meets the
	// same provider (common random numbers), so a difference between two
	// policies is the policies', not the dice's.
	o.OpenAI.Rand = rn.stream("provider", tenant)
	o.VLLM = rn.VLLM
	if o.VLLM.Capacity == 0 {
		o.VLLM.Capacity = provider.DefaultVLLMCapacity
	}
	if rn.ClearToolUses {
		c := provider.DefaultClearToolUses()
		o.Anthropic.ClearToolUses = &c
	}
	p, err := provider.ByName(name, o)
	if err != nil || rn.ProviderErrorRate == 0 {
		return p, err
	}
	return &provider.Faulty{Inner: p, Rate: rn.ProviderErrorRate, Rand: rn.stream("faults", tenant)}, nil
}

func (rn *Runner) options(pol *sim.Policy, summaryModel string) sim.Options {
	o := sim.Options{Prices: rn.Prices, Count: rn.Tokens.CountHash, SummarizerModel: summaryModel, Hashes: &rn.hashes, Memo: &rn.derived}
	o.Summarizer = func(s *traces.Session) compact.Summarizer {
		model := summaryModel
		if model == "" {
			model = s.Model
		}
		return &sim.Summarizer{
			Model:      model,
			Count:      rn.Tokens.CountText,
			CountParts: rn.Tokens.CountTexts,
			Latency:    provider.DefaultLatency("anthropic", model),
			FailRate:   rn.SummarizerFailRate,
			Rand:       rn.stream("summarizer", s.ID, pol.Name),
		}
	}
	return o
}

// build makes the simulator's policy of sp and names its summary model.
func (rn *Runner) build(p Policy) (*sim.Policy, string, error) {
	if p.OnRecorded {
		pol, err := sim.NewRecordedVariant(p.Name, *p.Config, p.TTL, rn.Tokens)
		return pol, p.Config.SummaryModel, err
	}
	if p.Config == nil {
		if p.Name == assent.Name {
			// Run by sim/assent, not the engine (runCell): the name is
			// all the cell needs of it.
			return &sim.Policy{Name: assent.Name}, "", nil
		}
		if p.Name == sim.RecordedObservedName {
			return sim.NewRecordedObserved(), "", nil
		}
		return sim.NewRecorded(), "", nil
	}
	pol, err := sim.NewPolicy(*p.Config, rn.Tokens)
	if err != nil {
		return nil, "", err
	}
	if m := p.Config.SummaryModel; m != "" {
		// An unpriced summarizer would make every compaction free.
		if _, err := rn.Prices.Lookup(m); err != nil {
			return nil, "", fmt.Errorf("policy %s: auxiliary.compression.model: %w", p.Name, err)
		}
	}
	return pol, p.Config.SummaryModel, nil
}

// OwnTokens gives rn a token memo of its own over o200k_base (wrapped by
// wrap, when set: the seam tests count tokenizer calls through), backed by
// the persistent count cache in dir when dir is set (package tokcache).
// flush writes the cache and returns its warnings; call it once the runs
// are done. The process-wide memo may already serve another cache or
// tokenizer, hence a memo of its own.
func (rn *Runner) OwnTokens(dir string, wrap func(estimate.Tokenizer) estimate.Tokenizer) (flush func() []string, err error) {
	var tok estimate.Tokenizer
	if tok, err = tiktoken.Get("o200k_base"); err != nil {
		return nil, err
	}
	if wrap != nil {
		tok = wrap(tok)
	}
	rn.Tokens = estimate.NewMemo(tok)
	if dir == "" {
		return func() []string { return nil }, nil
	}
	c := tokcache.Open(dir, tok.Name(), tokcache.Options{})
	rn.Tokens.SetStore(c)
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

// hindsightFor reports whether the cells of policy get the hindsight
// optimum.
func (rn *Runner) hindsightFor(policy string) bool {
	return rn.Hindsight && (rn.HindsightOf == nil || rn.HindsightOf(policy))
}

package main

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces/formats"
)

// The flags several commands share are declared here, each once, with one
// help text; a command that means something narrower by one (run's single
// --policy) says so with fs.Lookup(name).Usage.

// addFrom declares --from, the format of the logs read.
func addFrom(fs *pflag.FlagSet, from *string) {
	fs.StringVar(from, "from", "", "force the format of the logs ("+strings.Join(formats.Names(), ", ")+"); default: told apart by content")
}

// addPrices declares --prices, the rate card's override (runner.LoadPrices).
func addPrices(fs *pflag.FlagSet, prices *string) {
	fs.StringVar(prices, "prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
}

// addJobs declares -j/--jobs.
func addJobs(fs *pflag.FlagSet, jobs *int) {
	fs.VarP(numflag.Int(jobs, runtime.GOMAXPROCS(0), numflag.IntRange{Lo: 1, Hi: math.MaxInt}), "jobs", "j", "parallel replays; output is identical for any value")
}

// addShardOut declares --out for the commands that print their report
// and write only a shard's part.
func addShardOut(fs *pflag.FlagSet, out *string) {
	fs.StringVarP(out, "out", "o", "", "with --shard: the directory to write the shard's part to, for ctxsim merge")
}

// policyList is --policy NAME (repeatable) and its alias --policies a,b,c:
// both append to one list, in the order given.
type policyList struct{ names *[]string }

func (p policyList) String() string { return strings.Join(*p.names, ",") }
func (p policyList) Type() string   { return "names" }
func (p policyList) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*p.names = append(*p.names, n)
		}
	}
	return nil
}

// textOrJSON is --format for commands whose output is a list of what they
// did (gen, import, validate): text, or json (the same as --json).
type textOrJSON struct{ asJSON *bool }

func (f textOrJSON) String() string {
	if f.asJSON != nil && *f.asJSON {
		return "json"
	}
	return "text"
}
func (f textOrJSON) Type() string { return "format" }
func (f textOrJSON) Set(v string) error {
	switch v {
	case "text":
		*f.asJSON = false
	case "json":
		*f.asJSON = true
	default:
		return fmt.Errorf("want text or json, got %q", v)
	}
	return nil
}

// addFormatTextJSON declares --format text|json beside --json.
func addFormatTextJSON(fs *pflag.FlagSet, asJSON *bool) {
	fs.Var(textOrJSON{asJSON}, "format", "output format: text or json (json is the same as --json)")
}

// simFlags are the settings of the replay commands.
type simFlags struct {
	runner.Settings
	policies, sets []string
	jobs           int
	cacheDir       string
	noCache        bool
}

// add declares the replay flags; faults adds the injected faults and
// context editing (compare, run, sweep; whatif replays what happened).
func (f *simFlags) add(fs *pflag.FlagSet, defaultPolicies string, faults bool) {
	fs.StringArrayVar(&f.policies, "policy", nil, "policy: a preset (see ctxsim policies), \"recorded\", \"as-sent\" (captures), or a .yaml/.json config; repeatable (default "+defaultPolicies+")")
	fs.Var(policyList{&f.policies}, "policies", "the same as --policy, comma-separated: --policies a,b is --policy a --policy b")
	fs.StringArrayVar(&f.sets, "set", nil, "override a setting of every policy, key=value (hermes key names); repeatable")
	fs.StringVar(&f.Provider, "provider", "auto", "fake provider: anthropic, openai, deepseek, gemini, vllm, or auto (the provider of each trace's model)")
	addPrices(fs, &f.Prices)
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of every random choice (synthetic traces, provider eviction, faults)")
	addJobs(fs, &f.jobs)
	if faults {
		fs.Var(numflag.Float(&f.SummarizerFailRate, 0, numflag.Fraction), "summarizer-fail-rate", "probability that a summarizer call fails (seeded), to exercise fallbacks and the breaker")
		fs.Var(numflag.Float(&f.ProviderErrorRate, 0, numflag.Range{Lo: 0, Hi: 1, OpenHi: true}), "provider-error-rate", "probability that a call is rejected as overloaded (seeded); the harness retries with backoff")
		fs.BoolVar(&f.ClearToolUses, "clear-tool-uses", false, "anthropic: server-side context editing (clear_tool_uses_20250919 with its defaults)")
	}
	fs.StringVar(&f.cacheDir, "cache-dir", "", "directory of the persistent token-count, import and hindsight caches (default $CTXSIM_CACHE_DIR, else ctxsim/ in the user cache directory)")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither read nor write the caches: import, tokenize and solve everything")
	fs.IntVar(&f.KVCapacity, "kv-capacity", provider.DefaultVLLMCapacity, "vllm: KV cache size in tokens (default: one 16 GB GPU serving a 3B model in fp16; vLLM's '# GPU blocks' × block size)")
	fs.IntVar(&f.KVBlockSize, "block-size", provider.DefaultVLLMBlockSize, "vllm: KV block size in tokens (vLLM's default 16)")
	fs.BoolVar(&f.NoHindsight, "no-hindsight", false, "skip the hindsight optimum (the cheapest cache schedule of each run's requests) and the regret columns")
}

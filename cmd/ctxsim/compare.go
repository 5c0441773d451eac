package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/harness"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// workloadFlags select the traces of compare, sweep and check.
type workloadFlags struct {
	traces   []string
	profiles []string
	sessions int
	from     string
	// shard, when set, makes load read native traces by header only;
	// stubs then reads the owned ones in full.
	shard shard.Spec
	stubs *shard.Stubs
}

func (w *workloadFlags) add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&w.traces, "trace", nil, "trace file or directory (the same as a PATH argument): native, Claude Code, Codex or hermes state.db told apart by content (else --from); repeatable")
	fs.StringArrayVar(&w.profiles, "profile", nil, "synthetic workload profile (see ctxsim gen --list); repeatable")
	fs.IntVar(&w.sessions, "sessions", harness.SuitePerProfile, "sessions per --profile")
	fs.StringVar(&w.from, "from", "", "force the format of --trace paths (native, claude-code, codex, hermes, chatlog)")
}

// load returns the selected sessions (harness.Load); with nothing
// selected, the embedded suite: the recorded Claude Code sessions and
// sessions of every profile.
func (w *workloadFlags) load(e *env, seed uint64) ([]*traces.Session, error) {
	if w.sessions < 1 || w.sessions > maxSessions {
		return nil, usagef("--sessions %d: want 1 to %d", w.sessions, maxSessions)
	}
	l, err := load(e, harness.Workload{Paths: w.traces, From: w.from, Profiles: w.profiles, PerProfile: w.sessions, Seed: seed, Shard: w.shard})
	if err != nil {
		return nil, err
	}
	if len(l.Sessions) == 0 {
		return nil, noSessions(e, "no sessions to replay")
	}
	w.stubs = l.Stubs
	return l.Sessions, nil
}

// simFlags are the settings every replay command shares.
type simFlags struct {
	policies    []string
	sets        []string
	provider    string
	prices      string
	seed        uint64
	jobs        int
	failRate    float64
	errRate     float64
	clearTU     bool
	cacheDir    string
	noCache     bool
	kvCap       int
	kvBlock     int
	noHindsight bool
}

func (f *simFlags) add(fs *pflag.FlagSet, defaultPolicies string) {
	fs.StringArrayVar(&f.policies, "policy", nil, "policy: a preset (see ctxsim policies), \"recorded\", or a .yaml/.json config; repeatable (default "+defaultPolicies+")")
	addPolicyAlias(fs, &f.policies)
	fs.StringArrayVar(&f.sets, "set", nil, "override a policy setting, key=value (hermes key names); repeatable")
	fs.StringVar(&f.provider, "provider", "auto", "fake provider: anthropic, openai, deepseek, gemini, vllm, or auto (the provider of each trace's model)")
	fs.StringVar(&f.prices, "prices", "", "LiteLLM model_prices_and_context_window.json to override or extend the rate card")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every random choice (synthetic traces, provider eviction, faults)")
	fs.IntVarP(&f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "parallel replays; output is identical for any value")
	fs.Float64Var(&f.failRate, "summarizer-fail-rate", 0, "probability that a summarizer call fails (seeded), to exercise fallbacks and the breaker")
	fs.Float64Var(&f.errRate, "provider-error-rate", 0, "probability that a call is rejected as overloaded (seeded); the harness retries with backoff")
	fs.BoolVar(&f.clearTU, "clear-tool-uses", false, "anthropic: server-side context editing (clear_tool_uses_20250919 with its defaults)")
	f.addCache(fs)
	addVLLMFlags(fs, f)
	fs.BoolVar(&f.noHindsight, "no-hindsight", false, "skip the hindsight optimum (the cheapest cache schedule of each run's requests) and the regret columns")
}

// addVLLMFlags declares the vllm provider's KV cache, with the defaults of
// its documented GPU profile (provider.DefaultVLLMCapacity).
func addVLLMFlags(fs *pflag.FlagSet, f *simFlags) {
	fs.IntVar(&f.kvCap, "kv-capacity", provider.DefaultVLLMCapacity, "vllm: KV cache size in tokens (default: one 16 GB GPU serving a 3B model in fp16; vLLM's '# GPU blocks' × block size)")
	fs.IntVar(&f.kvBlock, "block-size", provider.DefaultVLLMBlockSize, "vllm: KV block size in tokens (vLLM's default 16)")
}

// addCache declares the token-count cache's flags.
func (f *simFlags) addCache(fs *pflag.FlagSet) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "directory of the persistent token-count, import and hindsight caches (default $CTXSIM_CACHE_DIR, else ctxsim/ in the user cache directory)")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither read nor write the caches: import, tokenize and solve everything")
}

func (f *simFlags) setup(e *env) (*experiment.Setup, error) {
	if f.jobs < 1 {
		return nil, usagef("--jobs %d: want at least 1", f.jobs)
	}
	st, err := experiment.NewSetup(nil, f.provider, f.seed)
	if err != nil {
		return nil, err
	}
	st.SummarizerFailRate, st.ProviderErrorRate, st.ClearToolUses = f.failRate, f.errRate, f.clearTU
	st.Hindsight = !f.noHindsight
	st.VLLM.Capacity, st.VLLM.BlockSize = f.kvCap, f.kvBlock
	if err := st.Check(); err != nil {
		return nil, err
	}
	if st.Prices, err = loadCard(f.prices); err != nil {
		return nil, err
	}
	dir := f.cacheDirFor(e)
	if dir != "" {
		openCaches(e, st, dir)
	}
	if dir == "" && e.tokenizer == nil {
		return st, nil // the process-wide memo, no store
	}
	flush, err := st.OwnMemo(dir, e.tokenizer)
	if err != nil {
		return nil, err
	}
	e.atExit = append(e.atExit, func() {
		for _, w := range flush() {
			fmt.Fprintf(e.stderr, "ctxsim: warning: %s\n", w)
		}
	})
	return st, nil
}

// cacheDirFor is the token-count cache directory: --cache-dir, else the
// environment's default; "" with --no-cache.
func (f *simFlags) cacheDirFor(e *env) string {
	switch {
	case f.noCache:
		return ""
	case f.cacheDir != "":
		return f.cacheDir
	}
	return e.cacheDir
}

// outFlags say where results go.
type outFlags struct {
	formatFlags
	out string
}

func (o *outFlags) add(fs *pflag.FlagSet) {
	o.formatFlags.add(fs, "print summary.json to stdout (same as --format json)")
	fs.StringVarP(&o.out, "out", "o", "", "directory to write records.jsonl, summary.json and report.html to")
}

func init() {
	register(&command{
		name:    "compare",
		summary: "replay traces under policies and compare cost, hit rate, occupancy, latency",
		usage:   "[PATH...] [--profile P]... [--policy NAME]... [flags]",
		flags: func(fs *pflag.FlagSet) func(*env, []string) error {
			var wf workloadFlags
			var sf simFlags
			var of outFlags
			wf.add(fs)
			sf.add(fs, "every preset, and recorded")
			of.add(fs)
			plots := fs.String("plots", "", "directory to write the figures to (SVG and PNG)")
			detail := fs.Bool("detail", false, "one row per (session, policy) even for the embedded suite")
			var sh shardFlags
			sh.flag(fs, "tenants")
			return func(e *env, args []string) error {
				wf.traces = append(wf.traces, args...) // PATH... and --trace PATH are one list
				if err := sh.parse(of.out); err != nil {
					return err
				}
				return runCompare(e, fs, &wf, &sf, &of, *plots, *detail, &sh)
			}
		},
	})
}

func runCompare(e *env, fs *pflag.FlagSet, wf *workloadFlags, sf *simFlags, of *outFlags, plots string, detail bool, sh *shardFlags) error {
	format, err := of.parse()
	if err != nil {
		return err
	}
	st, err := sf.setup(e)
	if err != nil {
		return err
	}
	specs, err := experiment.CompareSpecs(sf.policies, sf.sets)
	if err != nil {
		return err
	}
	warnPolicy(e, experiment.SpecWarnings(specs))
	suite := len(wf.traces) == 0 && len(wf.profiles) == 0
	render := harness.CompareRender{Policies: experiment.SpecNames(specs), Suite: suite, Detail: detail}
	m, err := sh.manifest(fs, "compare", sf.seed, wf.traces, suite, sf.prices, render)
	if err != nil {
		return err
	}
	wf.shard = sh.sp
	sessions, err := wf.load(e, sf.seed)
	if err != nil {
		return err
	}
	o := runOptions(e, sf.jobs, sh.sp)
	o.Stubs, o.Records = wf.stubs, of.out != "" || plots != ""
	rp, cellErr := harness.Compare(e.ctx, st, sessions, specs, o)
	if harness.Stopped(cellErr) {
		return cellErr
	}
	for _, w := range experiment.ClampWarnings(sf.sets, nil, sessions, st.Prices) {
		fmt.Fprintln(e.stderr, "warning: "+w)
	}
	res := rp.Outputs("ctxsim compare", st, e.warn.List())
	if err := res.Write(of.out, plots); err != nil {
		return err
	}
	if err := render.Print(e.stdout, format, res); err != nil {
		return err
	}
	return sh.finish(of.out, m, res.Warnings, rp.Parts, cellErr)
}

// suiteResults runs the embedded suite under the preset policies
// (harness.Suite), as "ctxsim compare" with no arguments does: what
// "ctxsim check" compares with its baseline when given no --results.
func suiteResults(e *env) (report.Results, error) {
	wf := workloadFlags{sessions: harness.SuitePerProfile}
	sf := simFlags{provider: "auto", seed: 1, jobs: runtime.GOMAXPROCS(0)}
	st, err := sf.setup(e)
	if err != nil {
		return report.Results{}, err
	}
	sessions, err := wf.load(e, sf.seed)
	if err != nil {
		return report.Results{}, err
	}
	return harness.Suite(e.ctx, st, sessions, runOptions(e, sf.jobs, shard.Spec{}))
}

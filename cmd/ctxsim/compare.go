package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/policies/estimate/tokcache"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/report/columnar"
	"github.com/ctxsim/ctxsim/shard"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
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
	fs.IntVar(&w.sessions, "sessions", 2, "sessions per --profile")
	fs.StringVar(&w.from, "from", "", "force the format of --trace paths (native, claude-code, codex, hermes, chatlog)")
}

// load returns the selected sessions; with nothing selected, the embedded
// suite: the recorded Claude Code sessions and sessions of every profile.
func (w *workloadFlags) load(e *env, seed uint64) ([]*traces.Session, error) {
	var out []*traces.Session
	warn := &traces.Warnings{}
	if w.sessions < 1 || w.sessions > maxSessions {
		return nil, usagef("--sessions %d: want 1 to %d", w.sessions, maxSessions)
	}
	if len(w.traces) == 0 && len(w.profiles) == 0 {
		ss, ws, err := experiment.Suite(e.ctx, w.sessions, seed)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
		warn.Merge(ws)
		e.warn.Merge(ws)
	}
	if len(w.traces) > 0 {
		ss, stubs, ws, err := openTraces(e, w.traces, w.from, w.shard)
		if err != nil {
			return nil, err
		}
		w.stubs = stubs
		out = append(out, ss...)
		warn.Merge(ws)
	}
	for _, p := range w.profiles {
		ss, err := synth.Generate(p, w.sessions, seed, synth.Options{})
		if err != nil {
			return nil, usagef("--profile: %v", err)
		}
		out = append(out, ss...)
	}
	if warn.Len() > 0 {
		printWarnings(e, warn)
	}
	if len(out) == 0 {
		return nil, noSessions(e, "no sessions to replay")
	}
	return out, nil
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
	fs.StringVar(&f.cacheDir, "cache-dir", "", "directory of the persistent token-count cache (default $CTXSIM_CACHE_DIR, else ctxsim/ in the user cache directory)")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither read nor write the token-count cache: tokenize everything")
}

func (f *simFlags) setup(e *env) (*experiment.Setup, error) {
	if f.jobs < 1 {
		return nil, usagef("--jobs %d: want at least 1", f.jobs)
	}
	if f.failRate < 0 || f.failRate > 1 {
		return nil, usagef("--summarizer-fail-rate %v: want 0..1", f.failRate)
	}
	if f.errRate < 0 || f.errRate >= 1 {
		return nil, usagef("--provider-error-rate %v: want 0 ≤ rate < 1", f.errRate)
	}
	if f.clearTU && f.provider != "anthropic" && f.provider != "auto" {
		return nil, usagef("--clear-tool-uses is an Anthropic feature (--provider %s)", f.provider)
	}
	card, err := loadCard(f.prices)
	if err != nil {
		return nil, err
	}
	st, err := experiment.NewSetup(card, f.provider, f.seed)
	if err != nil {
		return nil, err
	}
	st.SummarizerFailRate, st.ProviderErrorRate, st.ClearToolUses = f.failRate, f.errRate, f.clearTU
	st.Hindsight = !f.noHindsight
	if f.kvCap < 0 || f.kvBlock < 0 || (f.kvCap > 0 && f.kvBlock > f.kvCap) {
		return nil, usagef("--kv-capacity %d, --block-size %d: want positive sizes, the block no larger than the cache", f.kvCap, f.kvBlock)
	}
	st.VLLM.Capacity, st.VLLM.BlockSize = f.kvCap, f.kvBlock
	dir := f.cacheDirFor(e)
	if dir == "" && e.tokenizer == nil {
		return st, nil // the process-wide memo, no store
	}
	// A memo of its own: the process-wide one may already serve another
	// store or tokenizer (tests run commands in one process).
	var tok estimate.Tokenizer
	if tok, err = tiktoken.Get("o200k_base"); err != nil {
		return nil, err
	}
	if e.tokenizer != nil {
		tok = e.tokenizer(tok)
	}
	st.Memo = estimate.NewMemo(tok)
	if dir != "" {
		c := tokcache.Open(dir, tok.Name(), tokcache.Options{})
		st.Memo.SetStore(c)
		e.atExit = append(e.atExit, func() {
			c.Flush()
			for _, w := range c.Warnings() {
				fmt.Fprintf(e.stderr, "ctxsim: warning: %s\n", w)
			}
		})
	}
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

// runCells replays cells on jobs workers with a progress bar on stderr;
// emit sees the cells that ran, in cell order. A cell that fails is named
// on stderr and left out, and counted in the error returned at the end;
// the others' results stand.
func runCells(e *env, st *experiment.Setup, cells []*experiment.Cell, jobs int, journal *experiment.Journal, emit func(*experiment.Cell)) error {
	todo := 0
	for _, c := range cells {
		if c.Result == nil {
			todo++
		}
	}
	bar := newProgress(e.stderr, todo)
	failed := 0
	err := st.Sweep(e.ctx, cells, jobs, journal, func(c *experiment.Cell) error {
		bar.Add(1)
		if c.Err != nil {
			failed++
			fmt.Fprintf(e.stderr, "ctxsim: cell %s: %v\n", c.Key(), c.Err)
			return nil
		}
		emit(c)
		return nil
	})
	bar.Finish()
	if err == nil && failed > 0 {
		err = &cellsFailed{failed, len(cells)}
	}
	return err
}

// cellsFailed is runCells' error when some cells failed and the rest ran.
type cellsFailed struct{ n, of int }

func (e *cellsFailed) Error() string {
	return fmt.Sprintf("%d of %d cells failed (see above)", e.n, e.of)
}

func defaultPolicySpecs(sets []string) ([]experiment.Spec, error) {
	names := append(policies.PresetNames(), sim.RecordedName)
	if len(sets) > 0 {
		names = names[:len(names)-1]
	}
	return resolvePolicies(names, sets)
}

func init() {
	register(&command{
		name:    "compare",
		summary: "replay traces under policies and compare cost, hit rate, occupancy, latency",
		usage:   "[PATH...] [--profile P]... [--policy NAME]... [flags]",
		help: `Compare replays every trace under every policy against a fake provider.
Given traces (PATH, or --trace PATH) or --profile, it prints one row per
(trace, policy): requests, cost, token-weighted cache hit rate, peak
occupancy (billed prompt ÷ compaction threshold), compactions and p95 turn
latency, with the cheapest policy of each trace marked "*" and runs whose
calls overflowed the window marked "!" (never the cheapest). Traces with
recorded usage also show what was really billed and the simulation's error
against it.

With neither it runs the embedded suite (the recorded Claude Code sessions
compiled into the binary and two sessions of every synthetic profile, under
every preset policy, and "recorded" for the recorded sessions) and prints
one row per policy and one column per workload; --detail prints the rows.

Sessions of one tenant (a session and its subagents; recorded sessions
loaded from one path) share one provider cache and replay in global time
order. Output is byte-identical for any -j.

Examples:
  ctxsim compare
  ctxsim compare ~/.claude/projects --policy recorded --policy prune-on-resume
  ctxsim compare --profile coding-burst --sessions 5 --policy hermes-default --policy hermes-micro
  ctxsim compare --profile cron --policies hermes-default,hermes-micro --set prompt_caching.layout=system_and_3
  ctxsim compare --provider vllm --kv-capacity 40000 --profile coding-burst --policy hermes-default
  ctxsim compare --trace traces/ --policy my-policy.yaml --provider openai --out out/
  ctxsim compare traces/ --shard 2/2 --out out/shard-2`,
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
	var specs []experiment.Spec
	if len(sf.policies) == 0 {
		specs, err = defaultPolicySpecs(sf.sets)
	} else {
		specs, err = resolvePolicies(sf.policies, sf.sets)
	}
	if err != nil {
		return err
	}
	suite := len(wf.traces) == 0 && len(wf.profiles) == 0
	var m shard.Manifest
	if sh.sp.Sharded() {
		in, err := inputs(wf.traces, suite, sf.prices)
		if err != nil {
			return err
		}
		if m, err = manifest(fs, "compare", sf.seed, in, compareRender{Policies: specNames(specs), Suite: suite, Detail: detail}); err != nil {
			return err
		}
	}
	wf.shard = sh.sp
	rp, cellErr, err := replayAll(e, wf, st, sf.seed, sf.jobs, specs, of.out != "" || plots != "", sh)
	if err != nil {
		return err
	}
	for _, w := range clampWarnings(sf.sets, nil, rp.sessions, st.Prices) {
		fmt.Fprintln(e.stderr, "warning: "+w)
	}
	wl := map[string]string{}
	for _, s := range rp.sessions {
		wl[s.ID] = experiment.Workload(s)
	}
	res := &results{title: "ctxsim compare", seed: st.Seed, runs: rp.runs, recs: rp.recs, labels: rp.labels, workloads: wl,
		price: firstPrice(st, rp.recs), warnings: e.warn.List()}
	if err := res.write(of.out, plots); err != nil {
		return err
	}
	if err := compareTable(e, format, res.runs, wl, specNames(specs), suite && !detail, res.warnings); err != nil {
		return err
	}
	if cellErr == nil {
		return sh.write(of.out, m, res.warnings)
	}
	return cellErr
}

// compareRender is what merge needs to print a sharded compare's table.
type compareRender struct {
	Policies []string `json:"policies"`
	Suite    bool     `json:"suite"`
	Detail   bool     `json:"detail"`
}

// compareTable prints compare's table: the workload table of the embedded
// suite, else one row per run.
func compareTable(e *env, format report.Format, runs []report.RunSummary, wl map[string]string, policies []string, byWorkload bool, warnings []traces.Warning) error {
	if byWorkload && format != report.JSON {
		return report.WorkloadTable(runs, wl, policies).Write(e.stdout, format)
	}
	return report.WriteRuns(e.stdout, format, runs, report.RunsOptions{Warnings: warnings})
}

func specNames(specs []experiment.Spec) []string {
	names := make([]string, len(specs))
	for i, sp := range specs {
		names[i] = sp.Name
	}
	return names
}

// replayed is what replayAll returns: every session loaded, the runs sorted
// by trace and policy order, the records when kept, and each run's tenant
// and workload.
type replayed struct {
	sessions []*traces.Session
	runs     []report.RunSummary
	recs     []sim.Record
	labels   map[string]runLabel
}

// replayAll loads wf's sessions and replays each (tenant, policy) cell on
// jobs workers; a shard (sh set and sharded) replays only the tenants it
// owns. cellErr reports cells that failed (the others' results stand);
// err, a failure before any cell ran.
func replayAll(e *env, wf *workloadFlags, st *experiment.Setup, seed uint64, jobs int, specs []experiment.Spec, keep bool, sh *shardFlags) (rp replayed, cellErr, err error) {
	if rp.sessions, err = wf.load(e, seed); err != nil {
		return rp, nil, err
	}
	var sp shard.Spec
	if sh != nil {
		sp = sh.sp
	}
	cells, order, err := shardCells(e, st, wf.stubs, experiment.Tenants(rp.sessions), specs, sp,
		func(_ experiment.Spec, t experiment.Tenant) string { return t.Key })
	if err != nil {
		return rp, nil, err
	}
	st.Memo.Warm(rp.sessions)
	rp.labels = labels(cells)
	at := map[*experiment.Cell][]int{}
	for i := range order {
		at[cells[i]] = order[i]
	}
	var addErr error
	cellErr = runCells(e, st, cells, jobs, nil, func(c *experiment.Cell) {
		rp.runs = append(rp.runs, c.Result.Runs...)
		n := 0
		if keep {
			rp.recs = append(rp.recs, c.Result.Records...)
			n = len(c.Result.Records)
		}
		if sh != nil && addErr == nil {
			addErr = sh.cell(at[c], c.Tenant.Key, c, st, n)
		}
	})
	if failed := (*cellsFailed)(nil); cellErr != nil && !errors.As(cellErr, &failed) {
		return rp, nil, cellErr // interrupted: no partial output
	}
	if addErr != nil {
		return rp, nil, addErr
	}
	sortRuns(rp.runs, specs)
	return rp, cellErr, nil
}

// sortRuns orders rows by trace, then by the order policies were given.
func sortRuns(runs []report.RunSummary, specs []experiment.Spec) {
	sortRunsBy(runs, specNames(specs))
}

func sortRunsBy(runs []report.RunSummary, policies []string) {
	rank := map[string]int{}
	for i, s := range policies {
		rank[s] = i
	}
	sortStable(runs, func(a, b report.RunSummary) bool {
		if a.Trace != b.Trace {
			return a.Trace < b.Trace
		}
		return rank[a.Policy] < rank[b.Policy]
	})
}

// A runLabel is a run's tenant and workload, for runs.parquet.
type runLabel struct{ tenant, workload string }

// labels names the tenant and workload of every root session of cells.
func labels(cells []*experiment.Cell) map[string]runLabel {
	out := map[string]runLabel{}
	for _, c := range cells {
		for _, r := range c.Tenant.Roots {
			out[r.ID] = runLabel{c.Tenant.Key, experiment.Workload(r)}
		}
	}
	return out
}

// results are what a replay command writes, from its own replays or merged
// from shards: the same bytes either way.
type results struct {
	title  string
	seed   uint64
	runs   []report.RunSummary
	recs   []sim.Record
	labels map[string]runLabel
	// workloads names each trace's workload in report.html (nil: the
	// trace's own name).
	workloads map[string]string
	// price is the first call's, for report.html's break-even figures.
	price *pricing.Price
	// warnings are the input's, for summary.json.
	warnings []traces.Warning
}

// write writes records.jsonl, summary.json, report.html, runs.parquet and
// records.parquet to out as one set (report.WriteSetAtomic), and the
// figures to plots.
func (res *results) write(out, plots string) error {
	if out != "" {
		in := report.HTMLInput{Title: res.title, Subtitle: fmt.Sprintf("seed %d", res.seed), Runs: res.runs, Records: res.recs,
			Price: res.price, Workloads: res.workloads, Warnings: res.warnings}
		// One set: a report that fails to render must not leave new
		// records beside an old report.
		files := []report.SetFile{
			{Name: "records.jsonl", Write: func(w io.Writer) error { return report.WriteRecords(w, res.recs) }},
			{Name: "summary.json", Write: func(w io.Writer) error {
				return report.WriteResults(w, report.Results{Runs: res.runs, Warnings: res.warnings})
			}},
			{Name: "report.html", Write: func(w io.Writer) error { return report.WriteHTML(w, in) }},
		}
		if err := report.WriteSetAtomic(out, append(files, parquetFiles(res.runs, res.labels, res.recs, true)...)); err != nil {
			return err
		}
	}
	if plots != "" {
		if err := os.MkdirAll(plots, 0o755); err != nil {
			return err
		}
		return report.WriteFigures(plots, report.RunFigures(res.recs))
	}
	return nil
}

// writeParquet writes runs.parquet (and records.parquet when withRecords)
// to out; docs/parquet.md is the schema.
func writeParquet(out string, runs []report.RunSummary, labels map[string]runLabel, recs []sim.Record, withRecords bool) error {
	for _, f := range parquetFiles(runs, labels, recs, withRecords) {
		if err := report.WriteFileAtomic(filepath.Join(out, f.Name), f.Write); err != nil {
			return err
		}
	}
	return nil
}

// parquetFiles are runs.parquet (and records.parquet when withRecords), as
// files of an output set.
func parquetFiles(runs []report.RunSummary, labels map[string]runLabel, recs []sim.Record, withRecords bool) []report.SetFile {
	files := []report.SetFile{{Name: "runs.parquet", Write: func(w io.Writer) error {
		rows := make([]columnar.Run, len(runs))
		for i, r := range runs {
			l := labels[r.Trace]
			rows[i] = columnar.RunOf(r, l.tenant, l.workload)
		}
		return columnar.WriteRuns(w, rows)
	}}}
	if withRecords {
		files = append(files, report.SetFile{Name: "records.parquet", Write: func(w io.Writer) error {
			return columnar.WriteRecords(w, recs)
		}})
	}
	return files
}

// firstPrice is the price of the first call's model, for the report's
// break-even figures; nil when the rate card has none.
func firstPrice(st *experiment.Setup, recs []sim.Record) *pricing.Price {
	for _, r := range recs {
		if r.Kind == sim.KindCall && r.Model != "" {
			p, err := st.Prices.Lookup(r.Model)
			if err != nil {
				return nil
			}
			return &p
		}
	}
	return nil
}

// suiteResults runs the embedded suite under the preset policies, as
// "ctxsim compare" with no arguments does: what "ctxsim check" compares with
// its baseline when given no --results.
func suiteResults(e *env) (report.Results, error) {
	wf := workloadFlags{sessions: 2}
	sf := simFlags{provider: "auto", seed: 1, jobs: runtime.GOMAXPROCS(0)}
	st, err := sf.setup(e)
	if err != nil {
		return report.Results{}, err
	}
	specs, err := defaultPolicySpecs(nil)
	if err != nil {
		return report.Results{}, err
	}
	rp, cellErr, err := replayAll(e, &wf, st, sf.seed, sf.jobs, specs, false, nil)
	if err != nil {
		return report.Results{}, err
	}
	return report.Results{Runs: rp.runs}, cellErr
}

func init() { checkSuite = suiteResults }

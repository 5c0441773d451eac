package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// helpExamples is every example line of every command's --help, with
// continuation lines ("\") joined, keyed by command.
func helpExamples(t *testing.T) []string {
	t.Helper()
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		_, help, _ := runCmd(t, n, "--help")
		in := false
		cur := ""
		for _, l := range strings.Split(help, "\n") {
			switch {
			case l == "Examples:":
				in = true
				continue
			case !in:
				continue
			case cur != "":
				cur += " " + strings.TrimSpace(strings.TrimSuffix(l, "\\"))
			case strings.HasPrefix(l, "  ctxsim "):
				cur = strings.TrimSpace(strings.TrimSuffix(l, "\\"))
			default:
				in = false
				continue
			}
			if !strings.HasSuffix(l, "\\") {
				out = append(out, strings.Join(strings.Fields(cur), " "))
				cur = ""
			}
		}
	}
	return out
}

// exampleFixtures makes the files the examples name, in dir, and returns
// the replacements that point the examples at them (longest first).
func exampleFixtures(t *testing.T, dir string) *strings.Replacer {
	t.Helper()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	traces := filepath.Join(dir, "traces")
	if code, _, errs := runCmd(t, "gen", "--profile", "cron", "--sessions", "2", "-o", traces); code != exitOK {
		t.Fatalf("gen: %s", errs)
	}
	out := filepath.Join(dir, "out")
	if code, _, errs := runCmd(t, "compare", "--profile", "cron", "--sessions", "1", "--policy", "hermes-default", "--out", out); code != exitOK {
		t.Fatalf("compare --out: %s", errs)
	}
	native := filepath.Join(dir, "native")
	if code, _, errs := runCmd(t, "import", "claude-code", ccDir, "-o", native); code != exitOK {
		t.Fatalf("import: %s", errs)
	}
	nativeAB := filepath.Join(native, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl") + " " + filepath.Join(native, "d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl")
	policy := write("my-policy.yaml", "name: my-policy\ncompression:\n  threshold: 0.8\n")
	prices := write("model_prices_and_context_window.json", `{"claude-opus-4-6":{"input_cost_per_token":5e-06,"output_cost_per_token":2.5e-05,"cache_read_input_token_cost":5e-07,"cache_creation_input_token_cost":6.25e-06},"gpt-5-codex":{"input_cost_per_token":1.25e-06,"output_cost_per_token":1e-05,"cache_read_input_token_cost":1.25e-07}}`)
	base, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	baseline := write("base.json", string(base))
	return strings.NewReplacer(
		"~/.claude/projects/-home-me-proj/4d5611e5.jsonl", ccBig,
		"~/.claude/projects/-home-me-proj/", ccDir,
		"~/.claude/projects/-home-me-proj", ccDir,
		"~/.claude/projects", ccDir,
		"~/.codex/sessions", "../../traces/codex/testdata/sessions",
		"~/.hermes/state.db", "../../traces/hermes/testdata/export.json",
		"~/.hermes/config.yaml", "../../policies/testdata/hermes-config.yaml",
		"testdata/claude-code", ccDir,
		"testdata/baseline.json", "../../testdata/baseline.json",
		"traces/a.jsonl traces/b.jsonl", nativeAB,
		"sweeps/threshold", filepath.Join(dir, "sweeps", "threshold"),
		"traces/*.jsonl", filepath.Join(traces, "cron-1-0.jsonl")+" "+filepath.Join(traces, "cron-1-1.jsonl"),
		"traces/synth", filepath.Join(dir, "synth"),
		"traces/", traces,
		"trace.jsonl", ccShort,
		"session.jsonl", ccShort,
		"my-policy.yaml", policy,
		"tuned.yaml", filepath.Join(dir, "tuned.yaml"),
		"model_prices_and_context_window.json", prices,
		"base.json", baseline,
		"out/summary.json", filepath.Join(out, "summary.json"),
		"out/shard-", filepath.Join(dir, "out2", "shard-"),
		"out/merged", filepath.Join(dir, "out2", "merged"),
		"out/", filepath.Join(dir, "out2"),
		"figs/", filepath.Join(dir, "figs"),
		"check.md", filepath.Join(dir, "check.md"),
		"capture.jsonl", filepath.Join(dir, "capture.jsonl"),
		"captures/", "../../sim/assent/testdata",
		"/tmp/t/*.jsonl", filepath.Join(dir, "t", "*.jsonl"),
		"/tmp/t", filepath.Join(dir, "t"),
		"/tmp/review4x", filepath.Join(dir, "review4x"),
		"/tmp/cron", filepath.Join(dir, "cron"),
	)
}

// runExample runs one example line (with "&&" between commands) after the
// replacements, expanding globs; it returns the last command's results.
func runExample(t *testing.T, r *strings.Replacer, ex string) (int, string, string) {
	t.Helper()
	var code int
	var out, errs string
	for _, part := range strings.Split(r.Replace(ex), "&&") {
		var args []string
		for _, a := range strings.Fields(part)[1:] { // drop "ctxsim"
			if strings.Contains(a, "*") {
				m, _ := filepath.Glob(a)
				args = append(args, m...)
				continue
			}
			args = append(args, a)
		}
		code, out, errs = runCmd(t, args...)
		if code != exitOK {
			break
		}
	}
	return code, out, errs
}

// exampleClaims is what each --help example claims, checked on its
// output: every example must be here, so a new one comes with its claim.
// (Paths in examples are pointed at testdata by exampleFixtures.)
var exampleClaims = map[string][]string{
	"ctxsim record -o capture.jsonl -- true":                            {"stderr:recording to", "stderr:recorded 0 pairs", "file:capture.jsonl"},
	"ctxsim record -o capture.jsonl --listen 127.0.0.1:0 -- sh -c exit": {"stderr:ANTHROPIC_BASE_URL=http://127.0.0.1:", "stderr:recorded 0 pairs"},
	"ctxsim record --json -o capture.jsonl -- true":                     {`"pairs":0`, `"warnings":[]`},
	"ctxsim fidelity --from capture captures/":                          {"as-sent, capture anthropic (10 calls)", "10 of 10 calls billed exactly"},
	"ctxsim breakeven": {"Cache break-even, claude-opus-4-6", "5m       1.25    0.10              1.28"},
	"ctxsim breakeven --model claude-opus-4-6 --json":                                                                   {`"model": "claude-opus-4-6"`, `"cache_write_1h": 10`},
	"ctxsim breakeven --growth 0.02 --long 0.1":                                                                         {"with 2.0% new tokens per call and 10.0% of gaps over an hour"},
	"ctxsim breakeven ~/.claude/projects":                                                                               {"55604662"},
	"ctxsim breakeven --plots figs/ --format markdown testdata/claude-code":                                             {"### Cache break-even", "| 5m | 1.25 |", "file:breakeven.svg"},
	"ctxsim breakeven --hindsight testdata/claude-code":                                                                 {"Idle gaps over 5 minutes: what the hindsight schedule chose", "19.2  1h      81,224"},
	"ctxsim check --baseline testdata/baseline.json":                                                                    {"cache_hit_rate", "ok: "},
	"ctxsim check --baseline base.json --results out/summary.json":                                                      {"cron-1-0 · hermes-default  cost", "0 regressions"},
	"ctxsim check --baseline base.json --results out/summary.json --tolerance cost=0.5% --tolerance cache_hit_rate=1pp": {"(within 1pp)", "(within 0.5%)"},
	"ctxsim check --baseline base.json --results out/summary.json --changed --markdown check.md":                        {"ok: 1 cells compared, 0 regressions", "file:check.md"},
	"ctxsim check --baseline base.json --results out/summary.json --update":                                             {"wrote baseline", "1 cells"},
	"ctxsim compare": {"Cost in $ per policy and workload", "claude-code logs (4)", "best saves"},
	"ctxsim compare ~/.claude/projects --policy recorded --policy prune-on-resume":                                  {"recorded", "prune-on-resume", "vs recorded %", "55604662-cf2a-4331-851a-ec234028f8ca"},
	"ctxsim compare --profile coding-burst --sessions 5 --policy hermes-default --policy hermes-micro":              {"coding-burst-1-4  hermes-micro"},
	"ctxsim compare --profile cron --policies hermes-default,hermes-micro --set prompt_caching.layout=system_and_3": {"cron-1-0  hermes-default", "cron-1-1  hermes-micro"},
	"ctxsim compare --provider vllm --kv-capacity 40000 --profile coding-burst --policy hermes-default":             {"coding-burst-1-1  hermes-default"},
	"ctxsim compare --trace traces/ --policy my-policy.yaml --provider openai --out out/":                           {"cron-1-0  my-policy", "file:out2/report.html", "file:out2/summary.json"},
	"ctxsim compare traces/*.jsonl --shard 1/2 --out out/shard-1":                                                   {"file:shard-1/manifest.json"},
	"ctxsim compare traces/*.jsonl --shard 2/2 --out out/shard-2":                                                   {"file:shard-2/manifest.json"},
	"ctxsim compare traces/ --shard 2/2 --out out/shard-2":                                                          {"file:shard-2/manifest.json", "file:shard-2/shard-cells.jsonl"},
	"ctxsim merge out/shard-1 out/shard-2 --out out/merged":                                                         {"cron-1-1", "file:merged/summary.json", "file:merged/records.parquet"},
	"ctxsim merge out/shard-* --out out/merged --format markdown":                                                   {"| cron-1-1 |"},
	"ctxsim cost ~/.claude/projects":                                                                                {"4d5611e5-241a-462a-8d15-5122611a9569", "  agent-a2898e3", "$11.04"},
	"ctxsim cost --by day --timezone UTC testdata/claude-code":                                                      {"2026-02-10", "  · claude-haiku-4-5-20251001", "$10.11"},
	"ctxsim cost --by month --json ~/.claude/projects":                                                              {`"key": "2026-02"`, `"cost_usd": 11.042545`},
	"ctxsim cost --by block --since 2026-02-10 --until 2026-02-10 --timezone UTC testdata/claude-code":              {"2026-02-10T21:00:00Z", "$0.93"},
	"ctxsim cost --by model --format csv testdata/claude-code":                                                      {"claude-sonnet-4-5-20250929,", ",0.450660,"},
	"ctxsim cost --prices model_prices_and_context_window.json ~/.codex/sessions":                                   {"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "gpt-5-codex"},
	"ctxsim cost --from native traces/a.jsonl traces/b.jsonl":                                                       {"55604662-cf2a-4331-851a-ec234028f8ca", "d6e0bada-1959-4eec-a9d2-0bfade768d8f", "$0.37"},
	"ctxsim fidelity testdata/claude-code":                                                                          {"Worst sessions", "4d5611e5-241a-462a-8d15-5122611a9569"},
	"ctxsim fidelity ~/.claude/projects --worst 20":                                                                 {"Worst sessions", "55604662-cf2a-4331-851a-ec234028f8ca"},
	"ctxsim fidelity testdata/claude-code --json":                                                                   {`"recorded_usd": 10.1136955`},
	"ctxsim gen --list": {"coding-burst", "cron", "all-day"},
	"ctxsim gen --profile coding-burst --sessions 20 --seed 1 -o traces/synth":              {"coding-burst-1-19.jsonl", "20 sessions"},
	"ctxsim gen --profile review --length 4 -o /tmp/review4x":                               {"review-1-0.jsonl (546 events, 273 calls)"},
	"ctxsim gen --profile cron --sessions 48 --model claude-sonnet-4-5 -o /tmp/cron --json": {`"id": "cron-1-47"`},
	"ctxsim import claude-code ~/.claude/projects -o traces/":                               {"4d5611e5-241a-462a-8d15-5122611a9569.jsonl (281 events, 139 calls)"},
	"ctxsim import claude-code ~/.claude/projects/-home-me-proj/4d5611e5.jsonl -o /tmp/t":   {"3 sessions from claude-code", "agent-a2898e3.jsonl (24 events, 12 calls)"},
	"ctxsim import codex ~/.codex/sessions -o traces/":                                      {"1 sessions from codex"},
	"ctxsim import hermes ~/.hermes/state.db -o traces/":                                    {"1 sessions from hermes"},
	"ctxsim import --json claude-code testdata/claude-code -o /tmp/t":                       {`"written": [`, `"calls": 139`},
	"ctxsim policies": {"Preset policies", "hermes-micro", "prune-on-resume"},
	"ctxsim policies hermes-micro --set compression.micro_compact_every_n_turns=3":                 {"Policy hermes-micro", "compression.micro_compact_every_n_turns"},
	"ctxsim policies --config ~/.hermes/config.yaml":                                               {"compression.threshold                              0.6"},
	"ctxsim policies --keys --format markdown":                                                     {"### Policy keys", "| compression.threshold |"},
	"ctxsim policies --json":                                                                       {`"name": "no-compaction"`},
	"ctxsim run testdata/claude-code/short.jsonl --policy recorded":                                {"55604662-cf2a-4331-851a-ec234028f8ca under recorded", "recorded $"},
	"ctxsim run testdata/claude-code --policy claude-code --json":                                  {`"policy": "claude-code"`, `"trace": "4d5611e5-241a-462a-8d15-5122611a9569"`},
	"ctxsim run trace.jsonl --policy hermes-micro --set compression.micro_compact_every_n_turns=5": {"under hermes-micro"},
	"ctxsim run --trace trace.jsonl --policy my-policy.yaml --out out/":                            {"under my-policy", "file:out2/records.jsonl"},
	"ctxsim run testdata/claude-code/tool_heavy.jsonl --hindsight":                                 {"hindsight        $0.1584 with the cheapest cache schedule (proven optimal)", "regret           $0.0677, 29.9% of cost", "Cache schedule, call by call"},
	"ctxsim sweep --policy hermes-micro --profile coding-burst --grid compression.micro_compact_every_n_turns=1,2,5,10 --grid prompt_caching.cache_ttl=5m,1h": {"(8 cells)"},
	"ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 --trace ~/.claude/projects --out sweeps/threshold":                        {"(3 cells)", "file:sweeps/threshold/cells.jsonl", "stderr:compression.threshold=0.5 acts as 0.75"},
	"ctxsim sweep --policy hermes-default --grid compression.threshold=0.5,0.7,0.85 --trace ~/.claude/projects --out sweeps/threshold --resume":               {"(3 cells)"},
	"ctxsim sweep --policy my-policy.yaml --grid prompt_caching.cache_ttl=5m,1h,auto --grid prompt_caching.layout=hermes,system_and_3 --plots figs/ --json":   {`"policy": "my-policy[cache_ttl=5m,layout=hermes]"`, "file:sweep-cost.svg"},
	"ctxsim tune --policy hermes-default": {"Tune of hermes-default over compression.threshold × prompt_caching.cache_ttl: 7 settings, 16 session groups in 5 folds",
		"Held-out saving: -3.9%", "Pareto front: cost against user_messages_verbatim"},
	"ctxsim tune ~/.claude/projects --policy claude-code --folds 2": {"4 session groups in 2 folds", "Held-out saving: 9.4%"},
	"ctxsim tune --profile coding-burst --sessions 4 --policy hermes-prune --folds 2 --keep user_messages_verbatim>=0.5 --emit tuned.yaml && ctxsim run trace.jsonl --policy tuned.yaml": {
		"tuned.yaml: 1 requests", "file:tuned.yaml"},
	"ctxsim tune --profile cron --sessions 4 --policy hermes-default --folds 2 --grid compression.threshold=0.75,0.9 --out out/tune --json": {
		`"recommended": "hermes-default"`, "file:tune/report.html", "file:tune/recommended.yaml"},
	"ctxsim tune traces/*.jsonl --policy masking-sliding --folds 2 --shard 1/2 --out out/tune-1 && ctxsim tune traces/*.jsonl --policy masking-sliding --folds 2 --shard 2/2 --out out/tune-2 && ctxsim merge out/tune-1 out/tune-2 --out out/tune-merged": {
		"Tune of masking-sliding", "file:tune-merged/report.html"},
	"ctxsim validate traces/*.jsonl":        {"cron-1-0.jsonl: OK"},
	"ctxsim validate --json traces/*.jsonl": {`"ok": true`},
	"ctxsim import claude-code ~/.claude/projects -o /tmp/t && ctxsim validate /tmp/t/*.jsonl": {"491e126e-1e71-469c-ade2-fcc8af567c74.jsonl: OK", "(12 with usage)"},
	"ctxsim version":                   {"ctxsim ", "go1."},
	"ctxsim --version":                 {"ctxsim ", "go1."},
	"ctxsim whatif ~/.claude/projects": {"prune-on-resume", "best"},
	"ctxsim whatif ~/.claude/projects/-home-me-proj --policies ttl-1h,prune-on-resume": {"ttl-1h  prune-on-resume  best"},
	"ctxsim whatif session.jsonl --policies hermes-default,masking-batched --json":     {`"policy": "hermes-default"`, `"policy": "masking-batched"`},
	"ctxsim whatif --from codex ~/.codex/sessions":                                     {"019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"},
}

// TestHelpExamples runs every example of every --help against testdata and
// checks what it claims: exit 0, and each claim (a substring of stdout;
// "stderr:" of stderr; "file:" a file it wrote, under the fixtures).
func TestHelpExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every help example (~45 s)")
	}
	dir := t.TempDir()
	r := exampleFixtures(t, dir)
	seen := map[string]bool{}
	for _, ex := range helpExamples(t) {
		seen[ex] = true
		claims, ok := exampleClaims[ex]
		if !ok {
			t.Errorf("example %q has no claim in exampleClaims", ex)
			continue
		}
		code, out, errs := runExample(t, r, ex)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", ex, code, errs)
			continue
		}
		for _, c := range claims {
			switch {
			case strings.HasPrefix(c, "file:"):
				name := strings.TrimPrefix(c, "file:")
				var found []string
				_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasSuffix(p, name) {
						found = append(found, p)
					}
					return nil
				})
				if len(found) == 0 {
					t.Errorf("%s: wrote no %s", ex, name)
				}
			case strings.HasPrefix(c, "stderr:"):
				if !strings.Contains(errs, strings.TrimPrefix(c, "stderr:")) {
					t.Errorf("%s: stderr lacks %q:\n%s", ex, strings.TrimPrefix(c, "stderr:"), errs)
				}
			default:
				if !strings.Contains(out, c) {
					t.Errorf("%s: output lacks %q:\n%.2000s", ex, c, out)
				}
			}
		}
	}
	for ex := range exampleClaims {
		if !seen[ex] {
			t.Errorf("exampleClaims has %q, which no --help shows", ex)
		}
	}
}

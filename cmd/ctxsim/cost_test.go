package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	ccDir   = "../../testdata/claude-code"
	ccBig   = ccDir + "/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
	ccShort = ccDir + "/short.jsonl"
)

type costJSON struct {
	Sessions []struct {
		ID       string
		Model    string
		Requests int
		Tokens   map[string]int64
		CostUSD  float64 `json:"cost_usd"`
		Children []struct {
			ID string
		}
	}
	Totals struct {
		Requests int
		Tokens   map[string]int64
		CostUSD  float64 `json:"cost_usd"`
		HitRate  float64 `json:"cache_hit_rate"`
	}
	Warnings []any
}

// TestCostMatchesCCUsage: ccusage 20.0.24 on the shared session's own
// calls reports 177 input, 479,537 cache creation, 11,618,567 cache read,
// 28,755 output and $9.53 at claude-opus-4-6 list prices. (Given alone, the
// file also brings 11 calls of its sonnet subagent, echoed in its progress
// lines: a child row.)
func TestCostMatchesCCUsage(t *testing.T) {
	code, out, errs := runCmd(t, "cost", "--json", "--timezone", "UTC", ccBig)
	require.Equal(t, exitOK, code, errs)
	var r costJSON
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	want := map[string]int64{"input": 177, "cache_write_5m": 479537, "cache_write_1h": 0, "cache_read": 11618567, "output": 28755}
	require.Len(t, r.Sessions, 1)
	for k, v := range want {
		if r.Sessions[0].Tokens[k] != v {
			t.Errorf("sessions[0].tokens.%s = %d, want %d", k, r.Sessions[0].Tokens[k], v)
		}
	}
	if got := int(r.Sessions[0].CostUSD*100 + 0.5); got != 953 {
		t.Errorf("sessions[0].cost_usd = %v, want $9.53", r.Sessions[0].CostUSD)
	}
	require.Len(t, r.Sessions[0].Children, 1)
	require.Equal(t, "4d5611e5-241a-462a-8d15-5122611a9569.agent-a2898e3", r.Sessions[0].Children[0].ID)
	if len(r.Sessions) != 1 || r.Sessions[0].Model != "claude-opus-4-6" || r.Sessions[0].Requests != 139 {
		t.Errorf("sessions = %+v, want one claude-opus-4-6 session of 139 requests", r.Sessions)
	}
	code, text, _ := runCmd(t, "cost", "--timezone", "UTC", ccBig)
	require.Equal(t, exitOK, code)
	for _, s := range []string{"177", "479,537", "11,618,567", "28,755", "$9.53", "claude-opus-4-6"} {
		if !strings.Contains(text, s) {
			t.Errorf("text output lacks %s:\n%s", s, text)
		}
	}
}

func TestCostTreeGolden(t *testing.T) {
	for _, tc := range []struct{ name, format string }{
		{"cost_tree.stdout", "text"},
		{"cost_tree_json.stdout", "json"},
		{"cost_tree_md.stdout", "markdown"},
		{"cost_tree_csv.stdout", "csv"},
	} {
		code, out, errs := runCmd(t, "cost", "--timezone", "UTC", "--format", tc.format, ccDir)
		require.Equal(t, exitOK, code, errs)
		goldenFile(t, tc.name, strings.ReplaceAll(out, ccDir, "testdata/claude-code"))
	}
}

// TestCostNativeAgrees: cost of the imported native traces equals cost of
// the logs, so the fast path and the importer bill the same, but for the
// subagent known only from subagent.jsonl's progress lines (5 haiku calls,
// $0.038163), which the importer does not build a transcript for.
func TestCostNativeAgrees(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCmd(t, "import", "claude-code", ccDir, "-o", dir)
	require.Equal(t, exitOK, code, errs)
	_, fast, _ := runCmd(t, "cost", "--json", ccDir)
	code, native, errs := runCmd(t, "cost", "--json", dir)
	require.Equal(t, exitOK, code, errs)
	var a, b costJSON
	require.NoError(t, json.Unmarshal([]byte(fast), &a))
	require.NoError(t, json.Unmarshal([]byte(native), &b))
	if math.Abs(a.Totals.CostUSD-0.038163-b.Totals.CostUSD) > 1e-6 || a.Totals.Requests-5 != b.Totals.Requests || len(b.Sessions) != 4 {
		t.Errorf("native cost %+v (%d top sessions), logs %+v", b.Totals, len(b.Sessions), a.Totals)
	}
}

func TestCostErrors(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"assistant","sessionId":"s","requestId":"r","timestamp":"2026-01-01T00:00:00Z","message":{"id":"m","model":"mystery-9","usage":{"input_tokens":1,"output_tokens":1}}}` + "\n"
	f := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(f, []byte(line), 0o644))
	// An unknown model costs $0 with a warning naming it; the other
	// sessions are priced as usual.
	code, out, errs := runCmd(t, "cost", "--timezone", "UTC", "--json", f, ccShort)
	require.Equal(t, exitOK, code, errs)
	var r costJSON
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.InDelta(t, 0.1444475, r.Totals.CostUSD, 1e-6, "short.jsonl priced, mystery-9 at $0")
	require.Equal(t, 2, r.Totals.Requests)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, fmt.Sprint(r.Warnings[0]), `no price for model "mystery-9"`)
	require.Contains(t, string(out), `"unpriced": [`)
	code, _, errs = runCmd(t, "cost", "--timezone", "UTC", f)
	if code != exitOK || !strings.Contains(errs, `no price for model "mystery-9": its calls count $0`) || !strings.Contains(errs, "--prices FILE") {
		t.Errorf("unknown model: exit %d, stderr %q", code, errs)
	}
	prices := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"mystery-9":{"input_cost_per_token":1e-6,"output_cost_per_token":2e-6}}`), 0o644))
	code, out, errs = runCmd(t, "cost", "--prices", prices, "--format", "csv", f)
	if code != exitOK || !strings.Contains(out, "mystery-9") {
		t.Errorf("--prices: exit %d, out %q, err %q", code, out, errs)
	}
	if code, _, _ := runCmd(t, "cost"); code != exitUsage {
		t.Errorf("no PATH: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCmd(t, "cost", "--from", "nope", f); code != exitUsage {
		t.Errorf("--from nope: exit %d, want %d", code, exitUsage)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"--by", "fortnight"}, {"--since", "yesterday"}, {"--until", "2026-13-01"},
		{"--timezone", "Mars/Olympus"}, {"--week-start", "someday"}, {"--since", "2026-02-12", "--until", "2026-02-10"}} {
		if code, _, _ := runCmd(t, append(append([]string{"cost"}, bad...), f)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

// hermes' session database keeps usage per session, not per call: cost
// prices the session totals, as many requests as the session made.
func TestCostHermesTotals(t *testing.T) {
	code, out, errs := runCmd(t, "cost", "--from", "hermes", "--json", "../../traces/hermes/testdata/export.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Totals struct {
			Requests int `json:"requests"`
			Tokens   struct {
				Input     int64 `json:"input"`
				Write     int64 `json:"cache_write_5m"`
				CacheRead int64 `json:"cache_read"`
				Output    int64 `json:"output"`
			} `json:"tokens"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	tt := rep.Totals
	if tt.Requests != 4 || tt.Tokens.Input != 1830 || tt.Tokens.Write != 6144 || tt.Tokens.CacheRead != 20480 || tt.Tokens.Output != 412 {
		t.Errorf("totals %+v, want 4 requests, 1,830 input, 6,144 write, 20,480 read, 412 output", tt)
	}
}

// A 1h-TTL session: Anthropic bills its 13,835 written tokens at 2× input,
// and ccusage 20.0.24 prices them so ($0.1444475 in its session report);
// --ccusage, once a way to price them at the 5m rate as older ccusage did,
// is deprecated and changes nothing.
func TestCostOneHourTier(t *testing.T) {
	cost := func(args ...string) (float64, map[string]int64) {
		t.Helper()
		code, out, errs := runCmd(t, append([]string{"cost", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var rep costJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Totals.CostUSD, rep.Totals.Tokens
	}
	// 3 input × $5 + 13,835 1h writes × $10 + 11,515 reads × $0.50 + 13 output × $25, per MTok
	got, tok := cost(ccShort)
	if want := 0.1444475; math.Abs(got-want) > 1e-6 || tok["cache_write_1h"] != 13835 || tok["cache_write_5m"] != 0 {
		t.Errorf("cost $%.7f with tokens %v, want $%.7f for 13835 1h writes", got, tok, want)
	}
	got2, tok2 := cost("--ccusage", ccShort)
	if got2 != got || tok2["cache_write_1h"] != 13835 {
		t.Errorf("--ccusage cost $%.7f with tokens %v, want it unchanged", got2, tok2)
	}
	_, _, errs := runCmd(t, "cost", "--ccusage", ccShort)
	require.Contains(t, errs, "deprecated")
}

type groupsJSON struct {
	Groups []struct {
		Key      string
		First    string
		Last     string
		Requests int
		CostUSD  float64 `json:"cost_usd"`
		Models   []struct {
			Model   string
			Tokens  map[string]int64
			CostUSD float64 `json:"cost_usd"`
		}
	}
	Totals struct {
		CostUSD  float64 `json:"cost_usd"`
		Requests int
	}
}

func costGroups(t *testing.T, args ...string) groupsJSON {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"cost", "--json"}, args...)...)
	require.Equal(t, exitOK, code, errs)
	var g groupsJSON
	require.NoError(t, json.Unmarshal([]byte(out), &g))
	return g
}

// TestCostByDayMatchesCCUsage pins what ccusage 20.0.24 reports on
// testdata/claude-code (ccusage daily --offline --timezone UTC --json
// --breakdown, and ccusage monthly): per day and model, tokens and cost.
func TestCostByDayMatchesCCUsage(t *testing.T) {
	type mrow struct {
		in, cw, cr, out int64
		cost            float64
	}
	want := map[string]map[string]mrow{
		"2026-02-10": {
			"claude-opus-4-6":           {1633, 57373, 527032, 1811, 0.890686},
			"claude-haiku-4-5-20251001": {24, 14285, 95343, 7, 0.0381633},
		},
		"2026-02-12": {
			"claude-opus-4-6":            {180, 488218, 11783397, 28763, 9.663036},
			"claude-sonnet-4-5-20250929": {53, 71257, 604156, 136, 0.45066},
		},
	}
	g := costGroups(t, "--by", "day", "--timezone", "UTC", ccDir)
	require.Len(t, g.Groups, 2)
	for _, gr := range g.Groups {
		require.Len(t, gr.Models, len(want[gr.Key]), gr.Key)
		for _, m := range gr.Models {
			w := want[gr.Key][m.Model]
			got := mrow{m.Tokens["input"], m.Tokens["cache_write_5m"] + m.Tokens["cache_write_1h"], m.Tokens["cache_read"], m.Tokens["output"], m.CostUSD}
			require.Equal(t, w.in, got.in, "%s %s", gr.Key, m.Model)
			require.Equal(t, [3]int64{w.cw, w.cr, w.out}, [3]int64{got.cw, got.cr, got.out}, "%s %s", gr.Key, m.Model)
			require.InDelta(t, w.cost, got.cost, 1e-6, "%s %s", gr.Key, m.Model)
		}
	}
	require.Equal(t, "2026-02-10T21:11:59.186Z", g.Groups[0].First)
	require.Equal(t, "2026-02-10T22:59:37.598Z", g.Groups[0].Last)
	require.InDelta(t, 11.04254485, g.Totals.CostUSD, 1e-6)
	m := costGroups(t, "--by", "month", "--timezone", "UTC", ccDir)
	require.Len(t, m.Groups, 1)
	require.Equal(t, "2026-02", m.Groups[0].Key)
	require.InDelta(t, 11.04254485, m.Groups[0].CostUSD, 1e-6)
	// In Tokyo (UTC+9) the 2026-02-10 calls after 15:00 UTC fall on the 11th.
	tk := costGroups(t, "--by", "day", "--timezone", "Asia/Tokyo", ccDir)
	require.Equal(t, []string{"2026-02-11", "2026-02-13"}, []string{tk.Groups[0].Key, tk.Groups[1].Key})
}

// TestCostByBlock: ccusage 20.0.24's blocks report on testdata/claude-code
// starts blocks at 2026-02-10T21:00Z, 2026-02-12T16:00Z (132 calls,
// $8.578453) and 2026-02-12T21:00Z (20 calls, $1.535243). Its first block
// has 17 calls where ctxsim has 22: ccusage's blocks report leaves out the
// 5 haiku calls echoed in subagent.jsonl's progress lines, which its daily
// and monthly reports count.
func TestCostByBlock(t *testing.T) {
	g := costGroups(t, "--by", "block", "--timezone", "UTC", ccDir)
	require.Len(t, g.Groups, 3)
	type blk struct {
		key      string
		requests int
		cost     float64
	}
	want := []blk{{"2026-02-10T21:00:00Z", 22, 0.890686 + 0.0381633}, {"2026-02-12T16:00:00Z", 132, 8.578453}, {"2026-02-12T21:00:00Z", 20, 1.535243}}
	for i, w := range want {
		require.Equal(t, w.key, g.Groups[i].Key)
		require.Equal(t, w.requests, g.Groups[i].Requests, w.key)
		require.InDelta(t, w.cost, g.Groups[i].CostUSD, 1e-6, w.key)
	}
	// --since/--until keep whole days in the zone: the 12th alone.
	d := costGroups(t, "--by", "block", "--timezone", "UTC", "--since", "2026-02-12", "--until", "20260212", ccDir)
	require.Len(t, d.Groups, 2)
	require.Equal(t, 152, d.Totals.Requests)
}

func TestCostByProjectAndModel(t *testing.T) {
	g := costGroups(t, "--by", "project", "--timezone", "UTC", ccDir)
	require.Len(t, g.Groups, 1)
	require.Equal(t, "claude-code", g.Groups[0].Key)
	require.Equal(t, 174, g.Groups[0].Requests)
	m := costGroups(t, "--by", "model", "--timezone", "UTC", ccDir)
	require.Equal(t, []string{"claude-opus-4-6", "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"},
		[]string{m.Groups[0].Key, m.Groups[1].Key, m.Groups[2].Key}, "by first activity")
	require.InDelta(t, 10.553722, m.Groups[0].CostUSD, 1e-6)
}

// TestCostCodexGPT56: a Codex rollout of a GPT-5.6 model, which only the
// embedded LiteLLM snapshot prices: 2,200 input × $4, 10,000 cache writes
// × $5 (GPT-5.6 bills writes), 8,000 reads × $0.40 and 200 output × $20,
// per MTok.
func TestCostCodexGPT56(t *testing.T) {
	g := costGroups(t, "--by", "model", "--timezone", "UTC", "testdata/codex-gpt56")
	require.Len(t, g.Groups, 1)
	require.Equal(t, "gpt-5.6-sol", g.Groups[0].Key)
	require.InDelta(t, 0.066, g.Totals.CostUSD, 1e-9)
}

// TestCostCodexMatchesCCUsage: ccusage 20.0.24 (ccusage codex session
// --offline --json) on the corpus's five Codex rollouts, per session.
func TestCostCodexMatchesCCUsage(t *testing.T) {
	corpus := "../../../shared/traces/corpus"
	files := map[string]float64{
		"CryptoSodi+Battle-Cities/codex-session.jsonl":                           0.178757,
		"anmol0b+Trezo-Ai/_history/1bf566ba/codex-session.jsonl":                 0.1071985,
		"anmol0b+Trezo-Ai/_history/ff1815ba/codex-session.jsonl":                 0.361863,
		"kunalcode12+Empire-of-bits-vorld/codex-session.jsonl":                   0.237387,
		"kunalcode12+Empire-of-bits-vorld/_history/5a2c36ba/codex-session.jsonl": 0.2679035,
	}
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("needs ../shared/traces/corpus (the shared trace corpus), not in this clone")
	}
	total := 0.0
	for f, want := range files {
		g := costGroups(t, "--timezone", "UTC", filepath.Join(corpus, f))
		require.InDelta(t, want, g.Totals.CostUSD, 1e-6, f)
		total += g.Totals.CostUSD
	}
	require.InDelta(t, 1.153109, total, 1e-6)
}

// A directory of logs of several formats (Claude Code logs beside a Codex
// rollout) is read file by file, each in its own format; it used to be
// read whole in the first file's format, which found nothing.
func TestCostMixedTree(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(t, os.WriteFile(to, b, 0o644))
	}
	copyFile("testdata/codex-gpt56/rollout-2026-11-02T10-00-00-0000gpt56.jsonl", filepath.Join(dir, "codex", "rollout.jsonl"))
	copyFile(filepath.Join(ccDir, "short.jsonl"), filepath.Join(dir, "claude", "short.jsonl"))
	alone := costGroups(t, "--by", "model", "--timezone", "UTC", filepath.Join(ccDir, "short.jsonl"))
	g := costGroups(t, "--by", "model", "--timezone", "UTC", dir)
	var models []string
	for _, gr := range g.Groups {
		models = append(models, gr.Key)
	}
	require.Contains(t, models, "gpt-5.6-sol")
	require.InDelta(t, alone.Totals.CostUSD+0.066, g.Totals.CostUSD, 1e-9, "the Claude Code log's cost plus the rollout's $0.066")
}

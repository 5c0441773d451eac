package main

import (
	"encoding/json"
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

// TestCostMatchesCCUsage: ccusage 20.0.24 on the shared session reports 177
// input, 479,537 cache creation, 11,618,567 cache read, 28,755 output and
// $9.53 at claude-opus-4-6 list prices.
func TestCostMatchesCCUsage(t *testing.T) {
	code, out, errs := runCmd(t, "cost", "--json", ccBig)
	require.Equal(t, exitOK, code, errs)
	var r costJSON
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	want := map[string]int64{"input": 177, "cache_write_5m": 479537, "cache_write_1h": 0, "cache_read": 11618567, "output": 28755}
	for k, v := range want {
		if r.Totals.Tokens[k] != v {
			t.Errorf("totals.tokens.%s = %d, want %d", k, r.Totals.Tokens[k], v)
		}
	}
	if got := int(r.Totals.CostUSD*100 + 0.5); got != 953 {
		t.Errorf("totals.cost_usd = %v, want $9.53", r.Totals.CostUSD)
	}
	if len(r.Sessions) != 1 || r.Sessions[0].Model != "claude-opus-4-6" || r.Sessions[0].Requests != 139 {
		t.Errorf("sessions = %+v, want one claude-opus-4-6 session of 139 requests", r.Sessions)
	}
	code, text, _ := runCmd(t, "cost", ccBig)
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
		code, out, errs := runCmd(t, "cost", "--format", tc.format, ccDir)
		require.Equal(t, exitOK, code, errs)
		goldenFile(t, tc.name, strings.ReplaceAll(out, ccDir, "testdata/claude-code"))
	}
}

// TestCostNativeAgrees: cost of the imported native traces equals cost of
// the logs, so the fast path and the importer bill the same.
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
	if a.Totals.CostUSD != b.Totals.CostUSD || a.Totals.Requests != b.Totals.Requests || len(b.Sessions) != 4 {
		t.Errorf("native cost %+v (%d top sessions), logs %+v", b.Totals, len(b.Sessions), a.Totals)
	}
}

func TestCostErrors(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"assistant","sessionId":"s","requestId":"r","timestamp":"2026-01-01T00:00:00Z","message":{"id":"m","model":"mystery-9","usage":{"input_tokens":1,"output_tokens":1}}}` + "\n"
	f := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(f, []byte(line), 0o644))
	code, _, errs := runCmd(t, "cost", f)
	if code != exitFailure || !strings.Contains(errs, `no price for model "mystery-9"`) || !strings.Contains(errs, "--prices FILE") {
		t.Errorf("unknown model: exit %d, stderr %q", code, errs)
	}
	prices := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"mystery-9":{"input_cost_per_token":1e-6,"output_cost_per_token":2e-6}}`), 0o644))
	code, out, errs := runCmd(t, "cost", "--prices", prices, "--format", "csv", f)
	if code != exitOK || !strings.Contains(out, "mystery-9") {
		t.Errorf("--prices: exit %d, out %q, err %q", code, out, errs)
	}
	if code, _, _ := runCmd(t, "cost"); code != exitUsage {
		t.Errorf("no PATH: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCmd(t, "cost", "--from", "nope", f); code != exitUsage {
		t.Errorf("--from nope: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCmd(t, "cost", "--format", "xml", f); code != exitUsage {
		t.Errorf("--format xml: exit %d, want %d", code, exitUsage)
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

// A 1h-TTL session: Anthropic bills its 13,835 written tokens at 2× input;
// --ccusage prices them at the 5m rate, as ccusage does.
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
	// the writes at $6.25 instead, counted as 5m writes as ccusage counts them
	got, tok = cost("--ccusage", ccShort)
	if want := 0.09256625; math.Abs(got-want) > 1e-6 || tok["cache_write_5m"]+tok["cache_write_1h"] != 13835 {
		t.Errorf("--ccusage cost $%.7f with tokens %v, want $%.7f for 13835 writes", got, tok, want)
	}
}

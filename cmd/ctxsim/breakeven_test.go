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

func TestBreakevenAcceptance(t *testing.T) {
	code, out, errs := runCmd(t, "breakeven", "--model", "claude-opus-4-6", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Tiers []struct {
			TTL  string  `json:"ttl"`
			Uses float64 `json:"breakeven_uses"`
		} `json:"tiers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	want := map[string]float64{"5m": 1.28, "1h": 2.11}
	if len(rep.Tiers) != 2 {
		t.Fatalf("tiers = %+v", rep.Tiers)
	}
	for _, tier := range rep.Tiers {
		if got := math.Round(tier.Uses*100) / 100; got != want[tier.TTL] {
			t.Errorf("%s break-even = %.2f, want %.2f", tier.TTL, got, want[tier.TTL])
		}
	}
}

func TestBreakevenGolden(t *testing.T) {
	// A recorded Claude Code session and a hand-made native one with
	// coffee-break gaps, where 1h wins.
	cc := filepath.Join("..", "..", "testdata", "claude-code", "short.jsonl")
	gappy := filepath.Join("testdata", "breakeven-gaps.jsonl")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"breakeven.text", []string{"breakeven"}},
		{"breakeven.json", []string{"breakeven", "--json"}},
		{"breakeven-mix.markdown", []string{"breakeven", "--format", "markdown", "--growth", "0.02", "--long", "0.1"}},
		{"breakeven-session.text", []string{"breakeven", cc, gappy}},
		{"breakeven-session.json", []string{"breakeven", "--json", gappy}},
		{"breakeven-session.csv", []string{"breakeven", "--format", "csv", cc, gappy}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, c.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			goldenFile(t, c.name, out)
		})
	}
}

func TestBreakevenPlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	code, _, errs := runCmd(t, "breakeven", "--plots", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"breakeven.svg", "breakeven.png", "breakeven.txt", "gap-cost.svg", "gap-cost.png", "gap-cost.txt"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestBreakevenUsage(t *testing.T) {
	for _, args := range [][]string{
		{"breakeven", "--model", "no-such-model"},
		{"breakeven", "--format", "yaml"},
		{"breakeven", "--long", "2"},
	} {
		if code, _, _ := runCmd(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, errs := runCmd(t, "breakeven", "no/such/path"); code != exitFailure || !strings.Contains(errs, "no/such/path") {
		t.Errorf("missing path: exit %d, stderr %q", code, errs)
	}
}

// breakeven's per-session 1h verdict is whatif's ttl-1h row: both replay
// the session with its subagents as the same variants.
func TestBreakevenAgreesWithWhatif(t *testing.T) {
	code, out, errs := runCmd(t, "breakeven", "--json", "../../testdata/claude-code")
	require.Equal(t, exitOK, code, errs)
	var be struct {
		Sessions []struct {
			ID     string  `json:"id"`
			Cost5m float64 `json:"cost_5m_usd"`
			Cost1h float64 `json:"cost_1h_usd"`
		} `json:"sessions"`
		Replayed bool `json:"replayed"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &be))
	require.True(t, be.Replayed)
	code, out, errs = runCmd(t, "whatif", "--json", "--policies", "ttl-5m,ttl-1h", "../../testdata/claude-code")
	require.Equal(t, exitOK, code, errs)
	var wi struct {
		Sessions []struct {
			ID       string `json:"id"`
			Policies []struct {
				Policy  string  `json:"policy"`
				CostUSD float64 `json:"cost_usd"`
			} `json:"policies"`
		} `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &wi))
	require.Len(t, be.Sessions, len(wi.Sessions), "one row per root session in both")
	for i, s := range wi.Sessions {
		require.Equal(t, s.ID, be.Sessions[i].ID)
		cost := map[string]float64{}
		for _, p := range s.Policies {
			cost[p.Policy] = p.CostUSD
		}
		require.InDelta(t, cost["ttl-5m"], be.Sessions[i].Cost5m, 1e-6, s.ID)
		require.InDelta(t, cost["ttl-1h"], be.Sessions[i].Cost1h, 1e-6, s.ID)
	}
}

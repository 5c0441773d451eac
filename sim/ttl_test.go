package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// The claude-code preset bills like Claude Code on a subscription: the main
// conversation on the 1h tier, subagents on 5m; an API-key user sets
// prompt_caching.cache_ttl=5m (code.claude.com/docs/en/prompt-caching).
func TestClaudeCodePresetTTL(t *testing.T) {
	sub, _ := policies.Preset("claude-code")
	key, _ := policies.Preset("claude-code")
	if err := key.Set("prompt_caching.cache_ttl", "5m"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  policies.Config
		src  traces.Source
		want prompt.TTL
	}{
		{"subscription, main", sub, traces.SourceCLI, prompt.TTL1h},
		{"subscription, subagent", sub, traces.SourceSubagent, prompt.TTL5m},
		{"API key, main", key, traces.SourceCLI, prompt.TTL5m},
		{"API key, subagent", key, traces.SourceSubagent, prompt.TTL5m},
	}
	for _, tt := range tests {
		p, err := NewPolicy(tt.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.TTL(&traces.Session{Source: tt.src}); got != tt.want {
			t.Errorf("%s: TTL %v, want %v", tt.name, got, tt.want)
		}
	}
	bad, _ := policies.Preset("claude-code")
	bad.SubagentCacheTTL = "2h"
	if _, err := NewPolicy(bad, nil); err == nil {
		t.Error("subagent_cache_ttl 2h accepted")
	}
}

// A recorded call's TTL runs from when its response began, as the log
// shows it (the first logged block, less its decoding), not from the
// model's TTFT after the request: the response of call 1 began ~20 s after
// its request, so its 5-minute entry is read 295 s after its first block,
// 315 s after the request (in the corpus, 5m entries are read up to ~305 s
// after the writing call's first block and missed from ~315 s; see
// run.recordedTiming). Counted from the request the entry had expired.
func TestRecordedTTLFromResponseStart(t *testing.T) {
	memo := estimate.NewMemo(bytesTok{})
	u := func(read, write int64) *traces.Usage {
		return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
	}
	msg := func(c byte, n int) []traces.Block { return txt(strings.Repeat(string(c), n)) }
	s := &traces.Session{ID: "ttl", Model: "claude-opus-4-6", Events: []traces.Event{
		{Time: at(0), Kind: traces.User, Blocks: msg('a', 2000)},
		{Time: at(20), Kind: traces.Assistant, Blocks: msg('b', 60), Usage: u(0, 7069), LatencyMS: 21000},
		{Time: at(315), Kind: traces.User, Blocks: msg('c', 2000)},
		{Time: at(318), Kind: traces.Assistant, Blocks: msg('d', 60), Usage: u(7069, 2068)},
	}}
	prov := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: testOpts().Prices}})
	opts := Options{Prices: testOpts().Prices, Count: memo.CountHash, Calibrate: func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) }}
	res, err := Run(context.Background(), s, NewRecorded(), prov, opts)
	require.NoError(t, err)
	var calls []Record
	for _, r := range res.Records {
		if r.Kind == KindCall {
			calls = append(calls, r)
		}
	}
	require.Len(t, calls, 2)
	require.Greater(t, calls[0].TTFTMS, int64(18000), "the first call's response began ~18.6 s after its request")
	require.Equal(t, int64(7069), calls[1].Usage.CacheRead, "read 295 s after the writing call's first block: alive")
	require.Empty(t, calls[1].MissReason)
}

package sim

import (
	"context"
	"fmt"
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

// Up to Claude Code 2.1.68 the recorded replay marks the last two messages,
// since 2.1.69 the last one (claudecode.MessageMarks): a call after 11
// parallel tool calls adds 23 blocks, more than the API's 20-block
// lookback from the last mark, so only the mark on the assistant message
// finds the previous call's entry (the corpus's 2.0.57 calls of 21 and 23
// blocks read their whole previous prompt).
func TestRecordedMarksByVersion(t *testing.T) {
	memo := estimate.NewMemo(bytesTok{})
	session := func(version string) *traces.Session {
		var calls, results []traces.Block
		calls = append(calls, traces.Block{Kind: traces.Text, Text: strings.Repeat("p", 200)})
		for i := range 11 {
			id := fmt.Sprintf("t%d", i)
			calls = append(calls, traces.Block{Kind: traces.ToolUse, ID: id, Name: "Bash", Input: strings.Repeat("i", 100)})
			results = append(results, traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: strings.Repeat("r", 300)})
		}
		u := func(read, write int64) *traces.Usage {
			return &traces.Usage{Input: 1, CacheRead: read, CacheWrite5m: write, Output: 5}
		}
		return &traces.Session{ID: "marks", Model: "claude-sonnet-4-5", Harness: "claude-code " + version, Events: []traces.Event{
			{Time: at(0), Kind: traces.User, Blocks: txt(strings.Repeat("a", 3000))},
			{Time: at(5), Kind: traces.Assistant, Blocks: calls, Usage: u(0, 8000)},
			{Time: at(6), Kind: traces.ToolResult, Blocks: results},
			{Time: at(10), Kind: traces.Assistant, Blocks: txt("done"), Usage: u(8000, 3400)},
		}}
	}
	secondRead := func(version string) int64 {
		prov := provider.NewAnthropic(provider.AnthropicOptions{Common: provider.Common{Prices: testOpts().Prices}})
		opts := Options{Prices: testOpts().Prices, Count: memo.CountHash, Calibrate: func(s *traces.Session) *Calibrator { return NewCalibrator(s, memo) }}
		res, err := Run(context.Background(), session(version), NewRecorded(), prov, opts)
		require.NoError(t, err)
		var reads []int64
		for _, r := range res.Records {
			if r.Kind == KindCall {
				reads = append(reads, r.Usage.CacheRead)
			}
		}
		require.Len(t, reads, 2)
		return reads[1]
	}
	two, one := secondRead("2.0.57"), secondRead("2.1.70")
	require.Greater(t, two, int64(7000), "2.0.57 marks the assistant message too: the previous entry is in reach")
	t.Logf("second call reads %d (2.0.57) and %d (2.1.70)", two, one)
	require.Less(t, one, two-2000, "2.1.70 marks the last message only: 23 blocks back is past the lookback")
}

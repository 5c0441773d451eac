package sim_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/runner"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// The benchmarks replay through package experiment, as the CLI does: one
// rate card, one memoized tokenizer warmed on all cores before the
// replays, tenants grouped by runner.Tenants, and Runner.Run over the
// cells on one worker. A recorded tenant is sized by its calibration (the
// recorded policy's anchored replay and its open-loop replay, run once per
// Setup and shared by every other policy's cell). Domain units are
// reported with b.ReportMetric: calls/s (per core: a replay is
// single-threaded), ns/call, and MB/s of the input where the input is a
// file.
//
//	go test ./sim -run '^$' -bench . -benchtime 3x -count 1

// bigLog is the largest shared Claude Code session (3.2 MB).
const bigLog = "../testdata/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"

// bench is the shared part of one process's replays.
type bench struct {
	prices *pricing.Card
	memo   *estimate.Memo
}

func newBench(tb testing.TB) *bench {
	tb.Helper()
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		tb.Fatal(err)
	}
	return &bench{prices: pricing.Default(), memo: estimate.NewMemo(tok)}
}

// setup is a fresh experiment over the bench's card and memo: nothing of
// an earlier replay (a recorded tenant's calibration) carries over.
func (bn *bench) setup() *runner.Runner {
	return &runner.Runner{Prices: bn.prices, Tokens: bn.memo, Provider: "anthropic", Seed: 1}
}

func spec(tb testing.TB, name string) runner.Policy {
	tb.Helper()
	if name == sim.RecordedName {
		return runner.Recorded()
	}
	sp, err := runner.Preset(name)
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// replay runs every tenant of ss under each policy in rn and returns the
// number of agent calls simulated.
func replay(tb testing.TB, rn *runner.Runner, ss []*traces.Session, pols ...runner.Policy) int {
	plan, err := rn.Plan(context.Background(), runner.Tenants(ss), pols, runner.PlanOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	calls := 0
	err = rn.Run(context.Background(), plan, runner.RunOptions{Workers: 1}, func(c *runner.Cell) {
		for i := range c.Result.Records {
			if c.Result.Records[i].Kind == sim.KindCall {
				calls++
			}
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	return calls
}

func importBig(tb testing.TB) ([]*traces.Session, int64) {
	tb.Helper()
	fi, err := os.Stat(bigLog)
	if err != nil {
		tb.Fatal(err)
	}
	ss, _, err := claudecode.Import(context.Background(), bigLog)
	if err != nil {
		tb.Fatal(err)
	}
	return ss, fi.Size()
}

// reportCalls adds the per-call metrics of a benchmark that simulated calls
// agent calls in each iteration.
func reportCalls(b *testing.B, calls int) {
	if calls == 0 {
		b.Fatal("no calls simulated")
	}
	total := float64(calls) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/call")
	b.ReportMetric(float64(calls), "calls/op")
}

// reportCPU adds calls per CPU-second (the process's user and system time
// since cpu0, garbage collection included): on a shared machine the wall
// clock counts other processes' time too, the CPU time mostly does not.
func reportCPU(b *testing.B, calls int, cpu0 time.Duration) {
	if d := processCPU() - cpu0; cpu0 > 0 && d > 0 {
		b.ReportMetric(float64(calls)*float64(b.N)/d.Seconds(), "calls/cpu-s")
	}
}

// BenchmarkReplayRecorded replays the largest shared session, imported once
// and with its tokens counted before the timer starts: what is timed is the
// engine, the policy and the provider. The recorded cell is the session's
// calibration, two replays (anchored and open-loop), each iteration in a
// fresh Setup; hermes-micro is a counterfactual cell sized by that
// calibration, made once. MB/s is of the Claude Code log; calls are the
// cell's own.
func BenchmarkReplayRecorded(b *testing.B) {
	ss, size := importBig(b)
	bn := newBench(b)
	bn.memo.Warm(ss)
	for _, name := range []string{sim.RecordedName, "hermes-micro"} {
		b.Run(name, func(b *testing.B) {
			sp := spec(b, name)
			st := bn.setup()
			calls := replay(b, st, ss, sp) // warm-up: the calibration, the summaries' tokens
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if name == sim.RecordedName {
					st = bn.setup()
				}
				replay(b, st, ss, sp)
			}
			reportCalls(b, calls)
		})
	}
}

// BenchmarkReplayLinear replays one review-profile session and one four
// times as long. Replay cost must grow linearly with calls: the total
// ns/op of length=4 must be at most 4.4× that of length=1 (compare the two
// lines; ns/call should stay flat).
func BenchmarkReplayLinear(b *testing.B) {
	bn := newBench(b)
	for _, name := range []string{"no-compaction", "hermes-default"} {
		for _, length := range []float64{1, 4} {
			b.Run(fmt.Sprintf("%s/length=%g", name, length), func(b *testing.B) {
				ss, err := synth.Generate(context.Background(), "review", 1, 7, synth.Options{Length: length})
				if err != nil {
					b.Fatal(err)
				}
				bn.memo.Warm(ss)
				sp, st := spec(b, name), bn.setup()
				calls := replay(b, st, ss, sp)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					replay(b, st, ss, sp)
				}
				reportCalls(b, calls)
			})
		}
	}
}

// BenchmarkCallsPerSecond is the engine's throughput on coding-burst
// sessions once every block's tokens are memoized: simulated calls per
// second on one core (target ≥ 100,000), by the wall clock (calls/s) and
// by the process's CPU time (calls/cpu-s), which a shared machine's load
// disturbs less:
//
//	go test ./sim -run '^$' -bench CallsPerSecond -benchtime 200x -count 5
//
// The replays of one policy share a Setup, as a comparison's cells do: the
// second replay of a session finds its block hashes and what compaction
// derives from its blocks (compact.Memo) kept. hermes-default/fresh-setup
// replays in a new Setup each time (the token memo still warm): the cost of
// a session's first replay.
func BenchmarkCallsPerSecond(b *testing.B) {
	bn := newBench(b)
	ss, err := synth.Generate(context.Background(), "coding-burst", 8, 1, synth.Options{})
	if err != nil {
		b.Fatal(err)
	}
	bn.memo.Warm(ss)
	for _, name := range []string{"no-compaction", "hermes-default", "hermes-default/fresh-setup"} {
		b.Run(name, func(b *testing.B) {
			preset, fresh := strings.CutSuffix(name, "/fresh-setup")
			sp, st := spec(b, preset), bn.setup()
			calls := replay(b, st, ss, sp)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for b.Loop() {
				if fresh {
					st = bn.setup()
				}
				replay(b, st, ss, sp)
			}
			reportCalls(b, calls)
			reportCPU(b, calls, cpu0)
		})
	}
}

// sweepSet is the input of the sweep benchmark as bytes on disk would be:
// the shared Claude Code logs and synthetic sessions in the native format.
type sweepSet struct {
	logs   []string
	native [][]byte
	bytes  int64
}

func newSweepSet(b *testing.B) *sweepSet {
	b.Helper()
	set := &sweepSet{}
	for _, f := range []string{bigLog, "../testdata/claude-code/tool_heavy.jsonl", "../testdata/claude-code/subagent.jsonl", "../testdata/claude-code/short.jsonl"} {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		set.logs = append(set.logs, f)
		set.bytes += fi.Size()
	}
	for _, p := range []struct {
		name string
		n    int
	}{{"coding-burst", 3}, {"review", 1}, {"cron", 2}} {
		ss, err := synth.Generate(context.Background(), p.name, p.n, 1, synth.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range ss {
			var buf bytes.Buffer
			if err := traces.WriteSession(&buf, s); err != nil {
				b.Fatal(err)
			}
			set.native = append(set.native, buf.Bytes())
			set.bytes += int64(buf.Len())
		}
	}
	return set
}

// load decodes the set.
func (set *sweepSet) load(b *testing.B) []*traces.Session {
	var out []*traces.Session
	for _, f := range set.logs {
		ss, _, err := claudecode.Import(context.Background(), f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, ss...)
	}
	for i, data := range set.native {
		s, err := traces.ReadSession(bytes.NewReader(data), fmt.Sprintf("native-%d.jsonl", i))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// sweepPolicies are 16 policies: the presets, then the presets with the
// other TTL tier, in order.
func sweepPolicies(b *testing.B) []runner.Policy {
	var out []runner.Policy
	for _, ttl := range []string{"5m", "1h"} {
		for _, cfg := range policies.Presets() {
			if len(out) == 16 {
				return out
			}
			if err := cfg.Set("prompt_caching.cache_ttl", ttl); err != nil {
				b.Fatal(err)
			}
			cfg.Name += "/" + ttl
			out = append(out, runner.Policy{Name: cfg.Name, Config: &cfg})
		}
	}
	return out
}

// BenchmarkSweep16 measures what a sweep saves by sharing decoding and
// tokenization across policies. single is one independent replay: decode
// the set, count its tokens in a fresh memo, replay one policy. sweep16
// decodes and counts once and replays 16 policies. The target is
// sweep16 ≤ 0.2 × 16 × single; the ratio is printed by the benchmark
// (b.Log) when both ran, and can be worked out from the two ns/op lines.
func BenchmarkSweep16(b *testing.B) {
	set := newSweepSet(b)
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	var single, sweep float64
	b.Run("single", func(b *testing.B) {
		b.SetBytes(set.bytes)
		for b.Loop() {
			bn := &bench{prices: pricing.Default(), memo: estimate.NewMemo(tok)}
			ss := set.load(b)
			bn.memo.Warm(ss)
			replay(b, bn.setup(), ss, spec(b, "hermes-default"))
		}
		single = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("sweep16", func(b *testing.B) {
		b.SetBytes(set.bytes)
		for b.Loop() {
			bn := &bench{prices: pricing.Default(), memo: estimate.NewMemo(tok)}
			ss := set.load(b)
			bn.memo.Warm(ss)
			replay(b, bn.setup(), ss, sweepPolicies(b)...)
		}
		sweep = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if single > 0 {
			b.ReportMetric(sweep/(16*single), "ratio-vs-16-single")
		}
	})
}

// BenchmarkWarm is the tokenization of the largest shared session on all
// cores, into a fresh memo each time; MB/s is of the Claude Code log.
func BenchmarkWarm(b *testing.B) {
	ss, size := importBig(b)
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	var text int64
	seen := map[uint64]bool{}
	for _, s := range ss {
		for i := range s.Events {
			for j := range s.Events[i].Blocks {
				bl := &s.Events[i].Blocks[j]
				if h := bl.Hash(); !seen[h] && !bl.Opaque() {
					seen[h] = true
					text += int64(len(bl.TokenText()))
				}
			}
		}
	}
	b.SetBytes(size)
	for b.Loop() {
		estimate.NewMemo(tok).Warm(ss)
	}
	b.ReportMetric(float64(text)*float64(b.N)/1e6/b.Elapsed().Seconds(), "text-MB/s")
}

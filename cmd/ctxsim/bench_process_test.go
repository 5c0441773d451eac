package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/internal/gobuild"
)

// ctxsimBin builds this command once per test binary, so that a benchmark
// can time whole processes: start-up, import, tokenizer, cache and replay.
var ctxsimBin = gobuild.Once(".", "ctxsim")

// BenchmarkWhatifProcess is "ctxsim whatif" on the four shared Claude Code
// sessions (testdata/claude-code), one new process per iteration, as a user
// runs it: cold (empty caches, every block tokenized), warm (the caches
// the previous run wrote: nothing imported, tokenized or solved), both with
// --no-hindsight, and warm with the hindsight optimum (whatif's default).
// With CTXSIM_BENCH_PREV naming another build's binary (a previous version,
// without the cache flags), "prev" runs it on the same sessions in the
// same benchmark run, the anchor for ratios on a shared machine. Besides
// ns/op it reports the child's CPU time (cpu-ms, user + system).
//
//	CTXSIM_BENCH_PREV=/tmp/ctxsim-old go test ./cmd/ctxsim -run '^$' -bench WhatifProcess -benchtime 5x -count 3
func BenchmarkWhatifProcess(b *testing.B) {
	bin, err := ctxsimBin()
	if err != nil {
		b.Skip(err)
	}
	const sessions = "../../testdata/claude-code"
	warmDir := b.TempDir()
	cases := []struct {
		name string
		bin  string
		args func(b *testing.B) []string
	}{
		{"cold", bin, func(b *testing.B) []string {
			return []string{"whatif", sessions, "--no-hindsight", "--cache-dir", b.TempDir()}
		}},
		{"warm", bin, func(*testing.B) []string {
			return []string{"whatif", sessions, "--no-hindsight", "--cache-dir", warmDir}
		}},
		{"warm-hindsight", bin, func(*testing.B) []string {
			return []string{"whatif", sessions, "--cache-dir", warmDir}
		}},
	}
	if prev := os.Getenv("CTXSIM_BENCH_PREV"); prev != "" {
		cases = append([]struct {
			name string
			bin  string
			args func(b *testing.B) []string
		}{{"prev", prev, func(*testing.B) []string { return []string{"whatif", sessions} }}}, cases...)
	}
	// Fill the warm caches (imports, counts, hindsight optima) before
	// timing them.
	if out, err := exec.Command(bin, "whatif", sessions, "--cache-dir", warmDir).CombinedOutput(); err != nil {
		b.Fatalf("filling the cache: %v\n%s", err, out)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				args := c.args(b) // a cold run's fresh directory is made untimed
				b.StartTimer()
				cmd := exec.Command(c.bin, args...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s %v: %v\n%s", c.bin, args, err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms")
		})
	}
}

// BenchmarkCostVsCcusage is "ctxsim cost --by day --json" against ccusage's
// native binary ("ccusage daily --json --offline") on the same Claude Code
// logs, whole processes, both in every iteration (the order alternates). CTXSIM_BENCH_TREE is a Claude config directory (its
// logs under projects/), CTXSIM_BENCH_CCUSAGE the ccusage binary (npm
// install ccusage: node_modules/@ccusage/ccusage-linux-x64/bin/ccusage);
// without both it skips. Before timing, it checks that both bill the same
// tokens and dollars (to the cent). It reports each one's wall and CPU
// milliseconds and ctxsim's ratios to ccusage.
//
//	CTXSIM_BENCH_TREE=DIR CTXSIM_BENCH_CCUSAGE=BIN go test ./cmd/ctxsim -run '^$' -bench CostVsCcusage -benchtime 3x -count 4
func BenchmarkCostVsCcusage(b *testing.B) {
	tree, ccu := os.Getenv("CTXSIM_BENCH_TREE"), os.Getenv("CTXSIM_BENCH_CCUSAGE")
	if tree == "" || ccu == "" {
		b.Skip("set CTXSIM_BENCH_TREE (a Claude config dir) and CTXSIM_BENCH_CCUSAGE (ccusage's binary)")
	}
	bin, err := ctxsimBin()
	if err != nil {
		b.Skip(err)
	}
	mk := map[string]func() *exec.Cmd{
		"ctxsim": func() *exec.Cmd {
			return exec.Command(bin, "cost", "--by", "day", "--json", filepath.Join(tree, "projects"))
		},
		"ccusage": func() *exec.Cmd {
			c := exec.Command(ccu, "daily", "--json", "--offline")
			c.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+tree)
			return c
		},
	}
	// The same bill from both: tokens by class and dollars.
	var ours struct {
		Totals struct {
			Tokens struct {
				Input   int64 `json:"input"`
				Write5m int64 `json:"cache_write_5m"`
				Write1h int64 `json:"cache_write_1h"`
				Read    int64 `json:"cache_read"`
				Output  int64 `json:"output"`
			}
			CostUSD float64 `json:"cost_usd"`
		}
	}
	var theirs struct {
		Totals struct {
			InputTokens, OutputTokens, CacheCreationTokens, CacheReadTokens int64
			TotalCost                                                       float64
		}
	}
	for name, v := range map[string]any{"ctxsim": &ours, "ccusage": &theirs} {
		out, err := mk[name]().Output()
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(out, v); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	o, t := ours.Totals, theirs.Totals
	if o.Tokens.Input != t.InputTokens || o.Tokens.Output != t.OutputTokens || o.Tokens.Read != t.CacheReadTokens ||
		o.Tokens.Write5m+o.Tokens.Write1h != t.CacheCreationTokens || math.Abs(o.CostUSD-t.TotalCost) >= 0.005 {
		b.Fatalf("bills differ: ctxsim %+v, ccusage %+v", o, t)
	}
	// Each iteration runs both, in alternating order: A/B pairs under the
	// same load.
	var wall, cpu [2]time.Duration
	names := [2]string{"ctxsim", "ccusage"}
	i := 0
	for b.Loop() {
		for k := range 2 {
			j := (i + k) % 2
			cmd := mk[names[j]]()
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			wall[j] += time.Since(t0)
			cpu[j] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		i++
	}
	for j, name := range names {
		b.ReportMetric(float64(wall[j].Microseconds())/1e3/float64(b.N), name+"-ms")
		b.ReportMetric(float64(cpu[j].Microseconds())/1e3/float64(b.N), name+"-cpu-ms")
	}
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "wall-ratio")
	b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "cpu-ratio")
}

// BenchmarkWhatifHindsightCold is what the hindsight optimum adds to a
// cold "ctxsim whatif" (empty caches: every log imported, every block
// tokenized, every optimum solved), whole processes: each iteration runs
// whatif with and without --no-hindsight, the order alternating, and
// reports the ratio of their wall times (hindsight-x; the aim is ≤ 1.35)
// and of their CPU times, and each one's peak resident memory (the
// child's maximum RSS: peak-MiB with the optimum, no-hindsight-peak-MiB
// without). The sessions are testdata/claude-code, or the
// directory CTXSIM_BENCH_WHATIF names (a corpus repository, say).
//
//	go test ./cmd/ctxsim -run '^$' -bench WhatifHindsightCold -benchtime 5x -count 3
//	CTXSIM_BENCH_WHATIF=$PWD/../shared/traces/corpus/SWORDIntel+claude-backups go test ./cmd/ctxsim -run '^$' -bench WhatifHindsightCold -benchtime 3x
func BenchmarkWhatifHindsightCold(b *testing.B) {
	bin, err := ctxsimBin()
	if err != nil {
		b.Skip(err)
	}
	sessions := "../../testdata/claude-code"
	if d := os.Getenv("CTXSIM_BENCH_WHATIF"); d != "" {
		sessions = d
	}
	var wall, cpu [2]time.Duration // [0] with the optimum, [1] without
	var rss [2]int64               // the largest peak resident set, KiB
	k := 0
	for b.Loop() {
		for j := range 2 {
			which := (j + k) % 2
			b.StopTimer()
			args := []string{"whatif", sessions, "--cache-dir", b.TempDir()}
			if which == 1 {
				args = append(args, "--no-hindsight")
			}
			b.StartTimer()
			cmd := exec.Command(bin, args...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", args, err, out)
			}
			wall[which] += time.Since(start)
			cpu[which] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss[which] = max(rss[which], ru.Maxrss) // KiB on Linux
			}
		}
		k++
	}
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "hindsight-x")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "hindsight-cpu-x")
	b.ReportMetric(float64(wall[1].Milliseconds())/float64(b.N), "no-hindsight-ms")
	b.ReportMetric(float64(rss[0])/1024, "peak-MiB")
	b.ReportMetric(float64(rss[1])/1024, "no-hindsight-peak-MiB")
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// ctxsimBin builds this command once per test binary, so that a benchmark
// can time whole processes: start-up, import, tokenizer, cache and replay.
var ctxsimBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ctxsim-bench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "ctxsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// BenchmarkWhatifProcess is "ctxsim whatif" on the four shared Claude Code
// sessions (testdata/claude-code), one new process per iteration, as a user
// runs it: cold (an empty token-count cache, every block tokenized), warm
// (the cache the previous run wrote: nothing tokenized), both with
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
	// Fill the warm cache before timing it.
	if out, err := exec.Command(bin, "whatif", sessions, "--no-hindsight", "--cache-dir", warmDir).CombinedOutput(); err != nil {
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

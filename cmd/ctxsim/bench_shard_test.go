package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// BenchmarkShardRSS measures the peak resident memory of one shard process
// against the size of a synthetic fleet: ctxsim gen writes the fleet
// (coding-burst sessions at --length 0.05, each its own tenant), then every
// shard of N replays its part in its own process (two at a time), and the
// benchmark reports the largest shard's peak RSS beside the unsharded
// run's. Memory bounded by the shard, not the fleet, shows as a per-shard
// figure that follows fleet/N.
//
// Small by default (CI does not run benchmarks); the measurement in
// docs/scale.md (8 shards: 125.7 vs 288.1 MiB at 500 sessions, 196.7 vs
// 808.7 MiB at 2,000) is
//
//	CTXSIM_FLEET=500,2000 CTXSIM_SHARDS=8 go test ./cmd/ctxsim -run '^$' -bench ShardRSS -benchtime 1x -timeout 2h
func BenchmarkShardRSS(b *testing.B) {
	sizes := []int{40, 160}
	if v := os.Getenv("CTXSIM_FLEET"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("CTXSIM_FLEET=%q: want sizes, comma-separated: %v", v, err)
			}
			sizes = append(sizes, n)
		}
	}
	shards := 4
	if v := os.Getenv("CTXSIM_SHARDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("CTXSIM_SHARDS=%q: %v", v, err)
		}
		shards = n
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "ctxsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	// rss runs the binary and returns its peak RSS in MiB.
	rss := func(args ...string) float64 {
		cmd := exec.Command(bin, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Errorf("ctxsim %v: %v\n%s", args, err, out)
			return 0
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Error("no rusage on this platform")
			return 0
		}
		return float64(ru.Maxrss) / 1024 // Linux reports KiB
	}
	for _, n := range sizes {
		fleet := filepath.Join(tmp, fmt.Sprintf("fleet-%d", n))
		if out, err := exec.Command(bin, "gen", "--profile", "coding-burst", "--length", "0.05", "--sessions", strconv.Itoa(n), "-o", fleet).CombinedOutput(); err != nil {
			b.Fatalf("gen: %v\n%s", err, out)
		}
		replay := []string{"compare", "--trace", fleet, "--policy", "hermes-default", "-j", "1"}
		b.Run(fmt.Sprintf("sessions=%d/shards=%d", n, shards), func(b *testing.B) {
			var worst, whole float64
			for range b.N {
				per := make([]float64, shards+1)
				var wg sync.WaitGroup
				sem := make(chan struct{}, 2)
				for k := 1; k <= shards; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sem <- struct{}{}
						defer func() { <-sem }()
						out := filepath.Join(tmp, fmt.Sprintf("out-%d-%d", n, k))
						os.RemoveAll(out)
						per[k] = rss(append(replay, "--shard", fmt.Sprintf("%d/%d", k, shards), "--out", out)...)
					}()
				}
				wg.Wait()
				worst = slices.Max(per)
				out := filepath.Join(tmp, fmt.Sprintf("whole-%d", n))
				os.RemoveAll(out)
				whole = rss(append(replay, "--out", out)...)
			}
			b.ReportMetric(worst, "MiB-peak-RSS/shard")
			b.ReportMetric(whole, "MiB-peak-RSS/unsharded")
			b.ReportMetric(float64(n), "sessions")
		})
	}
}

package tiktoken

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces/claudecode"

	"github.com/ctxsim/ctxsim/internal/gobuild"
)

// benchTexts is real session text, one string per distinct block (as a
// Memo counts it): the shared Claude Code sessions, or the repo's test log
// when they are absent.
var benchTexts = sync.OnceValues(func() ([]string, string) {
	for _, p := range []string{"../../../../shared/traces/claude-code", "../../../testdata/claude-code"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ss, _, err := claudecode.Import(context.Background(), p)
		if err != nil {
			continue
		}
		return texts(ss, map[string]bool{}, nil), p
	}
	return nil, ""
})

var benchOut = flag.String("benchtext", "", "TestWriteBenchText writes the benchmark's texts here, as a JSON array, for testdata/bench.js")

// TestWriteBenchText writes the texts BenchmarkCount counts, so that other
// tokenizers can be measured on the same input (testdata/bench.js).
func TestWriteBenchText(t *testing.T) {
	if *benchOut == "" {
		t.Skip("no -benchtext file given")
	}
	xs, _ := benchTexts()
	b, err := json.Marshal(xs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*benchOut, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCount is throughput on real session text, block by block, this
// package against the reference (pkoukk/tiktoken-go), side by side:
//
//	go test ./policies/estimate/tiktoken -run - -bench Count -benchtime 5x
func BenchmarkCount(b *testing.B) {
	xs, src := benchTexts()
	if len(xs) == 0 {
		b.Skip("no session text")
	}
	size := 0
	for _, x := range xs {
		size += len(x)
	}
	b.Logf("%d blocks, %d bytes from %s", len(xs), size, src)
	for _, name := range Names {
		enc, _ := Get(name)
		enc.Load()
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, x := range xs {
					enc.Count(x)
				}
			}
		})
		r := refs()[name]
		b.Run(name+"/pkoukk", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, x := range xs {
					r.EncodeOrdinary(x)
				}
			}
		})
	}
}

// BenchmarkLoad is the cost of the first count in a process: checking the
// embedded table's header, then counting one short text (its pages are
// already mapped after the first iteration; BenchmarkStartToFirstCount
// includes faulting them in).
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		e := &Encoding{name: "o200k_base", next: nextO200k, data: o200kTable}
		if e.Count("hello world") != 2 {
			b.Fatal("bad count")
		}
	}
}

// firstCount builds testdata/firstcount, the smallest program that counts
// (this package and the runtime, nothing else), once per test binary.
var firstCount = gobuild.Once("./testdata/firstcount", "firstcount")

// BenchmarkStartToFirstCount is process start to the first count: each
// iteration starts testdata/firstcount, which counts "hello world" (ranks
// not loaded before) and prints the count; the time is from starting the
// process to reading that line, so it includes exec, the runtime's start
// and the first count, not the process's exit. The sub-benchmark "none"
// prints without counting: the difference is what counting adds. Besides
// ns/op it reports first-ms (start to the printed count) and the child's
// CPU time (cpu-ms), which this shared machine's load inflates less.
//
//	go test ./policies/estimate/tiktoken -run - -bench StartToFirstCount -benchtime 40x -count 3
func BenchmarkStartToFirstCount(b *testing.B) {
	bin, err := firstCount()
	if err != nil {
		b.Skip(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{{"count", nil, "2\n"}, {"none", []string{"-n"}, "0\n"}} {
		b.Run(c.name, func(b *testing.B) {
			var first, cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(bin, c.args...)
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				line, err := bufio.NewReader(out).ReadString('\n')
				first += time.Since(t0)
				if err != nil || line != c.want {
					b.Fatalf("child printed %q: %v", line, err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(first.Microseconds())/1e3/float64(b.N), "first-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms")
		})
	}
}

// BenchmarkLongPiece is the merge of pieces far longer than any token: a
// 64 KiB run of one letter, of spaces, and of CJK (tiktoken's own merge is
// quadratic there; this one is O(n log n)).
func BenchmarkLongPiece(b *testing.B) {
	enc, _ := Get("o200k_base")
	enc.Load()
	for _, c := range []struct{ name, s string }{
		{"letters", strings.Repeat("A", 1<<16)},
		{"spaces", strings.Repeat(" ", 1<<16)},
		{"cjk", strings.Repeat("日本語", 1<<16/9)},
	} {
		s := c.s
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				enc.Count(s)
			}
		})
	}
}

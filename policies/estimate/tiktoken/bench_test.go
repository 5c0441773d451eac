package tiktoken

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// benchTexts is real session text, one string per distinct block (as a
// Memo counts it): the shared Claude Code sessions, or the repo's test log
// when they are absent.
var benchTexts = sync.OnceValues(func() ([]string, string) {
	for _, p := range []string{"../../../../shared/traces/claude-code", "../../../testdata/claude-code"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ss, _, err := claudecode.Import(p)
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

// BenchmarkLoad is the cost of the first count in a process: parsing the
// ranks, then counting one short text.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		e := &Encoding{name: "o200k_base", next: nextO200k}
		if e.Count("hello world") != 2 {
			b.Fatal("bad count")
		}
	}
}

// BenchmarkStartToFirstCount is process start to first count: each
// iteration runs this test binary as a child that counts one text and
// exits (TestMain), so it includes exec, the runtime's start and the load.
func BenchmarkStartToFirstCount(b *testing.B) {
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TIKTOKEN_FIRST_COUNT=1")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "2\n" {
			b.Fatalf("child: %v %q", err, out)
		}
	}
}

// BenchmarkStartNoCount is the same child exiting without counting: the
// difference from BenchmarkStartToFirstCount is what counting adds.
func BenchmarkStartNoCount(b *testing.B) {
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TIKTOKEN_FIRST_COUNT=0")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "0\n" {
			b.Fatalf("child: %v %q", err, out)
		}
	}
}

func TestMain(m *testing.M) {
	switch os.Getenv("TIKTOKEN_FIRST_COUNT") {
	case "1":
		enc, _ := Get("o200k_base")
		os.Stdout.WriteString(strings.Repeat("2\n", enc.Count("hello world")/2))
		os.Exit(0)
	case "0":
		os.Stdout.WriteString("0\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
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

package tiktoken

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsim/ctxsim/traces/claudecode"
)

// benchText is real session text: the block texts of the shared Claude
// Code sessions, or of the repo's test log when they are absent.
var benchText = sync.OnceValues(func() (string, string) {
	for _, p := range []string{"../../../../shared/traces/claude-code", "../../../testdata/claude-code"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ss, _, err := claudecode.Import(p)
		if err != nil {
			continue
		}
		return strings.Join(texts(ss, map[string]bool{}, nil), "\n"), p
	}
	return "", ""
})

// BenchmarkCount is throughput on real session text, this package against
// the reference (pkoukk/tiktoken-go), side by side.
//
//	go test ./policies/estimate/tiktoken -run - -bench Count -benchtime 3x
func BenchmarkCount(b *testing.B) {
	text, src := benchText()
	if text == "" {
		b.Skip("no session text")
	}
	b.Logf("%d bytes of block text from %s", len(text), src)
	for _, name := range Names {
		enc, _ := Get(name)
		enc.Load()
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				enc.Count(text)
			}
		})
		r := refs()[name]
		b.Run(name+"/pkoukk", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.EncodeOrdinary(text)
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

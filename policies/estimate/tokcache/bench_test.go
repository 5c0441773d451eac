package tokcache

import (
	"context"
	"os"
	"testing"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

func benchSessions(b *testing.B) []*traces.Session {
	p := "../../../../shared/traces/claude-code"
	if _, err := os.Stat(p); err != nil {
		p = "../../../testdata/claude-code"
	}
	ss, _, err := claudecode.Import(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return ss
}

// BenchmarkCountSessions is what counting every block of the sessions
// costs a new process: cold (no cache), and warm (the cache a previous run
// flushed).
//
//	go test ./policies/estimate/tokcache -run - -bench CountSessions -benchtime 5x
func BenchmarkCountSessions(b *testing.B) {
	ss := benchSessions(b)
	enc, _ := tiktoken.Get("o200k_base")
	enc.Load()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			estimate.NewMemo(enc).Warm(ss)
		}
	})
	dir := b.TempDir()
	c := Open(dir, enc.Name(), Options{})
	m := estimate.NewMemo(enc)
	m.SetStore(c)
	m.Warm(ss)
	if err := c.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			m := estimate.NewMemo(enc)
			m.SetStore(Open(dir, enc.Name(), Options{}))
			m.Warm(ss)
			if m.Tokenized() != 0 {
				b.Fatalf("warm run tokenized %d texts", m.Tokenized())
			}
		}
	})
}

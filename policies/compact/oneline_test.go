package compact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// oneLine's shortcut for long inputs (splitting only a prefix) gives what
// splitting the whole input gives, including when the prefix ends inside a
// multi-byte space or a run of white space.
func TestOneLineShortcut(t *testing.T) {
	slow := func(s string, n int) string {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > n {
			s = s[:safeCut(s, n)] + "…"
		}
		return s
	}
	pieces := []string{"a", "word", "日本語", " ", "  ", "\n", "\t", "\u3000", "\u00a0", "\u2028", "é", "{\"k\":", "😀", strings.Repeat(" ", 300), strings.Repeat("x", 50)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var b strings.Builder
		for b.Len() < 200+rng.IntN(2000) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s, n := b.String(), []int{1, 5, 40, 120}[i%4]
		if got, want := oneLine(s, n), slow(s, n); got != want {
			t.Fatalf("oneLine(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}

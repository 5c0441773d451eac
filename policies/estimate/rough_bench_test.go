package estimate

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// roughRef is Rough as hermes writes it: an all-ASCII test, then a pass
// over the runes. Rough must agree with it on every string.
func roughRef(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return (len(s) + CharsPerToken - 1) / CharsPerToken
	}
	dense, rest := 0, 0
	for _, r := range s {
		if cjkDense(r) {
			dense++
			continue
		}
		rest += utf8.RuneLen(max(r, 0))
	}
	return dense + (rest+CharsPerToken-1)/CharsPerToken
}

func TestRoughMatchesReference(t *testing.T) {
	pieces := []string{"a", "hello world ", "\n", "é", "日本", "한국어", "привет", "مرحبا", "\xff", "\xe6\x97", "ｆｕｌｌ", "🙂", strings.Repeat("x", 9)}
	r := rand.New(rand.NewPCG(4, 2))
	for n := range 2000 {
		var b strings.Builder
		for range n % 40 {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := Rough(s), roughRef(s); got != want {
			t.Fatalf("Rough(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzRough(f *testing.F) {
	for _, s := range []string{"", "abc", "日本語", "\xff\xfe", "12345678é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Rough(s), roughRef(s); got != want {
			t.Errorf("Rough(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkRough is a 16 KB tool output, ASCII and with one non-ASCII
// character (which sends hermes' version down its rune loop).
func BenchmarkRough(b *testing.B) {
	ascii := strings.Repeat("func main() { fmt.Println(x) }\n", 512)
	for _, c := range []struct{ name, s string }{{"ascii", ascii}, {"one-dash", ascii + "—"}} {
		name, s := c.name, c.s
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Rough(s)
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				roughRef(s)
			}
		})
	}
}

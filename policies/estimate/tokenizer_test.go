package estimate

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// cutCases are texts built to straddle every cut CountText could get
// wrong: newlines before white space, '/', punctuation runs, CJK, and
// Unicode spaces.
var cutCases = []string{
	"", "\n", "\n\n", "a\nb", "a\n\nb", "a \n b", "a.\n/b", "x;\n//comment\ny", "a\n\tb", "a\r\nb",
	"end.\n\n\n# Title\n", "  \n  \nx", "a\n\u3000b\n", "a\n\u00a0b", "日本語\n中文\nрусский\n",
	"{\"k\": 1}\n}\n]\n", "1234567\n89\n", "'s\n's\n", "a\n\u2028b", "ok\n",
}

func TestCountTextExact(t *testing.T) {
	texts := append([]string(nil), cutCases...)
	ss, _, err := claudecode.Import(context.Background(), "../../testdata/claude-code/tool_heavy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := synth.Generate(context.Background(), "multilingual", 1, 3, synth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, s := range append(ss, gen...) {
		for i := range s.Events {
			for j := range s.Events[i].Blocks {
				if tx := s.Events[i].Blocks[j].TokenText(); tx != "" {
					texts = append(texts, tx)
					all.WriteString(tx)
					all.WriteByte('\n')
				}
			}
		}
	}
	// Random splices of the cases, and one text of everything.
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(cutCases[r.IntN(len(cutCases))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, all.String())
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		tok, err := tiktoken.Get(enc)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemo(tok)
		for _, tx := range texts {
			if got, want := m.CountText(tx), tok.Count(tx); got != want {
				t.Errorf("%s: CountText(%.60q) = %d, want %d", enc, tx, got, want)
			}
		}
		// Memoized: the second pass gives the same counts.
		for _, tx := range texts[:len(cutCases)] {
			if got, want := m.CountText(tx), tok.Count(tx); got != want {
				t.Errorf("%s: memoized CountText(%q) = %d, want %d", enc, tx, got, want)
			}
		}
	}
}

func TestLineEnd(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"a\nb", 2}, {"a\n b", 4}, {"a\n/b", 4}, {"a\n\nb", 3}, {"a\n", 2}, {"a\n\u3000b\nc", 7}} {
		if got := lineEnd(c.s); got != c.want {
			t.Errorf("lineEnd(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

type byteTok struct{}

func (byteTok) Name() string          { return "bytes" }
func (byteTok) Count(text string) int { return len(text) }

// Another tokenizer counts the text whole: the cut is proven only for
// tiktoken's pre-tokenizers.
func TestCountTextOtherTokenizer(t *testing.T) {
	m := NewMemo(byteTok{})
	if got := m.CountText("a\nb\nc"); got != 5 {
		t.Errorf("CountText = %d, want 5", got)
	}
	b := traces.Block{Kind: traces.Text, Text: "abc"}
	if got := m.Count(&b); got != 3 || m.Len() != 1 {
		t.Errorf("Count = %d with %d memoized, want 3 with 1", got, m.Len())
	}
}

// BenchmarkCountText is a summarizer prompt seen before (all lines
// memoized) against counting it whole.
func BenchmarkCountText(b *testing.B) {
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	gen, err := synth.Generate(context.Background(), "coding-burst", 1, 1, synth.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := range gen[0].Events {
		for j := range gen[0].Events[i].Blocks {
			sb.WriteString(gen[0].Events[i].Blocks[j].TokenText())
			sb.WriteByte('\n')
		}
	}
	text := sb.String()
	b.Run("memo", func(b *testing.B) {
		m := NewMemo(tok)
		m.CountText(text)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			m.CountText(text)
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			tok.Count(text)
		}
	})
}

// lineTok records the pieces it is asked to count: a LineAdditive
// tokenizer whose count (the square of the length) tells pieces apart.
type lineTok struct{ pieces []string }

func (*lineTok) Name() string         { return "lines" }
func (*lineTok) LineAdditive() bool   { return true }
func (t *lineTok) Count(s string) int { t.pieces = append(t.pieces, s); return len(s) * len(s) }

// CountTexts cuts the parts' concatenation into exactly the lines
// CountText cuts it into, on random splits of texts that straddle every
// cut, runes split between parts and invalid UTF-8 included.
func TestCountTextsSameAsJoined(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// A U+3000 (a space) and a 日 split in two, and invalid bytes.
	cases := append(append([]string(nil), cutCases...), "\xe3\x80", "\x80b\n", "\xe6\x97", "\xa5本\n", "\x80\n", "/x\n", " y\n")
	for range 3000 {
		var parts []string
		for range 1 + r.IntN(5) {
			parts = append(parts, cases[r.IntN(len(cases))])
		}
		joined := strings.Join(parts, "")
		// Every byte offset may fall between two parts.
		if r.IntN(2) == 0 && len(joined) > 1 {
			i := 1 + r.IntN(len(joined)-1)
			parts = []string{joined[:i], joined[i:]}
		}
		want, got := &lineTok{}, &lineTok{}
		nw := NewMemo(want).CountText(joined)
		ng := NewMemo(got).CountTexts(parts...)
		if nw != ng || strings.Join(want.pieces, "|") != strings.Join(got.pieces, "|") {
			t.Fatalf("parts %q: CountTexts %d over %q, CountText of the join %d over %q", parts, ng, got.pieces, nw, want.pieces)
		}
	}
	if got := NewMemo(byteTok{}).CountTexts("a\n", "b", ""); got != 3 {
		t.Errorf("CountTexts with another tokenizer = %d, want 3", got)
	}
}

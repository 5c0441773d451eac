package tiktoken

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ref "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/synth"
)

// The reference is pkoukk/tiktoken-go: tiktoken's BPE with the split
// patterns run by a backtracking regexp engine (regexp2).
var refs = sync.OnceValue(func() map[string]*ref.Tiktoken {
	ref.SetBpeLoader(loader.NewOfflineLoader())
	m := map[string]*ref.Tiktoken{}
	for _, name := range Names {
		e, err := ref.GetEncoding(name)
		if err != nil {
			panic(err)
		}
		m[name] = e
	}
	return m
})

// seeds are texts at the pre-tokenizer's edges.
var seeds = []string{
	"", "\n   \n", "hello world", "  leading", "trailing  ", "a  b", "a\n\n\nb", "\r\n\r\n x", "\t\tindent",
	"don't I'LL we'Re they'VE it'S 'd 'm 'll", "'", "x'", "'s'", "ſ'ſ 'ſ", "İstanbul'S",
	"1234567890", "３４５ ٣٤٥ ⅧⅨ ½", "12ab34", "v1.2.3-rc4",
	"日本語のテキスト、中文文本。한국어 텍스트", "Ελληνικά Русский текст עברית العربية",
	"emoji 😀👍🏽 👨‍👩‍👧 flags 🇫🇷", "e\u0301 a\u0300\u0301 \u0301\u0301x", "ǅungla ǅ Ǆ",
	"CamelCaseWord HTTPServer iPhone XMLHttpRequest ABCdef", "ALLCAPS!!! MiXeD", "ʰʲ ˈ modifier",
	"\u00a0nbsp\u2028line\u2029para\u3000ideo\u0085nel", "     \n        ", strings.Repeat(" ", 300),
	strings.Repeat("\n", 50), strings.Repeat(" \n", 40), "a" + strings.Repeat(" ", 40) + "b",
	"!!!\n/// // /\n/x", "</div>\n\n<p>", "func main() {\n\tfmt.Println(\"hi\")\n}\n", "{\"k\":[1,2,3],\"v\":null}",
	"path/to/file.go:12:3: error", "$$ x^2 $$ ∑∫√", "--- a/b\n+++ b/b\n@@ -1,3 +1,4 @@",
	strings.Repeat("aGVsbG8gd29ybGQ=", 40), strings.Repeat("x", 1000), strings.Repeat("😀", 100),
	"\xff\xfe bad utf8 \xc3", "tab\tsep\tvalues\t\n", "<|endoftext|> stays text",
}

// same fails t if enc and the reference disagree on text.
func same(t testing.TB, name, text string) bool {
	t.Helper()
	enc, _ := Get(name)
	got := enc.Encode(text)
	want := refs()[name].EncodeOrdinary(text)
	if n := enc.Count(text); n != len(want) {
		t.Errorf("%s: Count(%.80q) = %d, want %d", name, text, n, len(want))
		return false
	}
	if len(got) != len(want) {
		t.Errorf("%s: Encode(%.80q): %d ids, want %d\n got %v\nwant %v", name, text, len(got), len(want), head(got), head(want))
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: Encode(%.80q): id %d is %d, want %d", name, text, i, got[i], want[i])
			return false
		}
	}
	return true
}

func head(ids []int) []int { return ids[:min(len(ids), 40)] }

func TestSeeds(t *testing.T) {
	for _, name := range Names {
		for _, s := range seeds {
			same(t, name, s)
		}
	}
}

func TestKnown(t *testing.T) {
	// tiktoken's own test values.
	enc, _ := Get("cl100k_base")
	if got := enc.Encode("hello world"); len(got) != 2 || got[0] != 15339 || got[1] != 1917 {
		t.Errorf("cl100k hello world = %v, want [15339 1917]", got)
	}
	enc, _ = Get("o200k_base")
	if got := enc.Encode("hello world"); len(got) != 2 || got[0] != 24912 || got[1] != 2375 {
		t.Errorf("o200k hello world = %v, want [24912 2375]", got)
	}
	if _, err := Get("p50k_base"); err == nil {
		t.Error("Get(p50k_base) did not fail")
	}
}

// texts of sessions, one per distinct block.
func texts(ss []*traces.Session, seen map[string]bool, out []string) []string {
	add := func(b *traces.Block) {
		if tx := b.TokenText(); tx != "" && !seen[tx] {
			seen[tx] = true
			out = append(out, tx)
		}
	}
	for _, s := range ss {
		for i := range s.Floor {
			add(&s.Floor[i])
		}
		for i := range s.Events {
			for j := range s.Events[i].Blocks {
				add(&s.Events[i].Blocks[j])
			}
		}
	}
	return out
}

func diffAll(t *testing.T, xs []string) {
	for _, name := range Names {
		bad := 0
		for _, x := range xs {
			if !same(t, name, x) {
				if bad++; bad == 5 {
					t.Fatalf("%s: giving up after 5 differences", name)
				}
			}
		}
	}
}

func TestSynthProfiles(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var xs []string
	for _, p := range synth.Profiles() {
		ss, err := synth.Generate(context.Background(), p.Name, 1, 7, synth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		xs = texts(ss, seen, xs)
	}
	if len(xs) < 100 {
		t.Fatalf("only %d synthetic texts", len(xs))
	}
	diffAll(t, xs)
}

// sharedTexts are the block texts of every Claude Code log under dir.
func sharedTexts(t *testing.T, dir string) []string {
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not found (the shared traces are not part of a clone): %v", dir, err)
	}
	if testing.Short() {
		t.Skip("-short: skipping the differential test over " + dir)
	}
	seen := map[string]bool{}
	var xs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		ss, _, err := claudecode.Import(context.Background(), p)
		if err != nil {
			return nil // not a Claude Code log (Codex, hermes)
		}
		xs = texts(ss, seen, xs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) == 0 {
		t.Fatalf("no block text under %s", dir)
	}
	t.Logf("%d distinct blocks under %s", len(xs), dir)
	return xs
}

func TestSharedSessions(t *testing.T) {
	t.Parallel()
	diffAll(t, sharedTexts(t, "../../../../shared/traces/claude-code"))
}

func TestSharedCorpus(t *testing.T) {
	t.Parallel()
	diffAll(t, sharedTexts(t, "../../../../shared/traces/corpus"))
}

func FuzzEncode(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range Names {
			same(t, name, s)
		}
	})
}

package tokcache

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/traces/claudecode"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := Open(dir, "o200k_base", Options{})
	if _, ok := c.Lookup("hello"); ok {
		t.Fatal("empty cache answered")
	}
	c.Save("hello", 1)
	c.Save("hello world", 2)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	d := Open(dir, "o200k_base", Options{})
	if w := d.Warnings(); len(w) != 0 {
		t.Fatalf("warnings: %v", w)
	}
	for text, want := range map[string]int{"hello": 1, "hello world": 2} {
		if n, ok := d.Lookup(text); !ok || n != want {
			t.Errorf("Lookup(%q) = %d, %v; want %d", text, n, ok, want)
		}
	}
	if _, ok := d.Lookup("hellp"); ok {
		t.Error("unknown text answered")
	}
	if _, ok := Open(dir, "cl100k_base", Options{}).Lookup("hello"); ok {
		t.Error("another encoding's count answered")
	}
	if d.Hits() != 2 {
		t.Errorf("Hits = %d, want 2", d.Hits())
	}
}

// countingTok is the tokenizer seam: it counts the calls that reach it.
type countingTok struct {
	estimate.Tokenizer
	calls atomic.Int64
}

func (c *countingTok) Count(s string) int { c.calls.Add(1); return c.Tokenizer.Count(s) }
func (c *countingTok) LineAdditive() bool { return true }

// A second pass over the same logs, in a new process (a new Memo and a
// reopened cache), tokenizes nothing and counts the same.
func TestSecondRunTokenizesNothing(t *testing.T) {
	ss, _, err := claudecode.Import(context.Background(), "../../../testdata/claude-code")
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := tiktoken.Get("o200k_base")
	dir := t.TempDir()
	run := func() (calls int64, total int) {
		tok := &countingTok{Tokenizer: enc}
		c := Open(dir, enc.Name(), Options{})
		m := estimate.NewMemo(tok)
		m.SetStore(c)
		m.Warm(ss)
		for _, s := range ss {
			for i := range s.Events {
				for j := range s.Events[i].Blocks {
					b := &s.Events[i].Blocks[j]
					total += m.Count(b)
					total += m.CountText(b.Text + "\nsummary of it\n")
				}
			}
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		if tok.calls.Load() != m.Tokenized() {
			t.Errorf("seam saw %d calls, memo says %d", tok.calls.Load(), m.Tokenized())
		}
		return tok.calls.Load(), total
	}
	calls1, total1 := run()
	calls2, total2 := run()
	if calls1 == 0 || total1 == 0 {
		t.Fatalf("first run tokenized %d texts, total %d", calls1, total1)
	}
	if calls2 != 0 {
		t.Errorf("second run tokenized %d texts, want 0", calls2)
	}
	if total2 != total1 {
		t.Errorf("second run counted %d tokens, first %d", total2, total1)
	}
}

func TestCorruptIgnored(t *testing.T) {
	for name, mangle := range map[string]func([]byte) []byte{
		"garbage":   func([]byte) []byte { return []byte("not a cache at all, but long enough") },
		"truncated": func(b []byte) []byte { return b[:len(b)-5] },
		"flipped":   func(b []byte) []byte { b[headerSize+3] ^= 1; return b },
		"empty":     func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c := Open(dir, "o200k_base", Options{})
			c.Save("a", 1)
			c.Save("bb", 2)
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "o200k_base.counts")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, mangle(b), 0o644)
			d := Open(dir, "o200k_base", Options{})
			if w := d.Warnings(); len(w) != 1 || !strings.Contains(w[0], "o200k_base.counts: token-count cache ignored") {
				t.Fatalf("warnings = %q, want one about the corrupt file", w)
			}
			if d.Len() != 0 {
				t.Fatalf("corrupt cache kept %d counts", d.Len())
			}
			d.Save("ccc", 3)
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			e := Open(dir, "o200k_base", Options{})
			if n, ok := e.Lookup("ccc"); !ok || n != 3 || len(e.Warnings()) != 0 {
				t.Fatalf("after rewrite: %d %v %q", n, ok, e.Warnings())
			}
		})
	}
}

func TestBounded(t *testing.T) {
	dir := t.TempDir()
	c := Open(dir, "o200k_base", Options{MaxEntries: 3})
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		c.Save(s, 1)
	}
	c.Flush()
	d := Open(dir, "o200k_base", Options{MaxEntries: 3})
	if d.Len() != 3 {
		t.Fatalf("kept %d counts, want 3", d.Len())
	}
	for _, s := range []string{"c", "d", "e"} {
		if _, ok := d.Lookup(s); !ok {
			t.Errorf("newest %q dropped", s)
		}
	}
	// Using "c" makes it the newest: two new counts push out "d" and "e".
	d = Open(dir, "o200k_base", Options{MaxEntries: 3})
	d.Lookup("c")
	d.Save("f", 1)
	d.Save("g", 1)
	d.Flush()
	e := Open(dir, "o200k_base", Options{MaxEntries: 3})
	for s, want := range map[string]bool{"c": true, "f": true, "g": true, "d": false, "e": false} {
		if _, ok := e.Lookup(s); ok != want {
			t.Errorf("%q kept = %v, want %v", s, ok, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "o200k_base.counts")); fi.Size() != headerSize+3*entrySize+sumSize {
		t.Errorf("file is %d bytes", fi.Size())
	}
}

// Two processes over one directory: each flush merges what the other
// wrote, and the directory holds no temporary file afterwards.
func TestSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	a := Open(dir, "o200k_base", Options{})
	b := Open(dir, "o200k_base", Options{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { a.Save(strings.Repeat("a", i+1), i+1) })
		wg.Go(func() { b.Save(strings.Repeat("b", i+1), i+1) })
	}
	wg.Wait()
	wg.Go(func() { a.Flush() })
	wg.Go(func() { b.Flush() })
	wg.Wait()
	// Whichever flushed second merged the first's counts.
	a.Flush()
	b.Save("last", 1)
	b.Flush()
	c := Open(dir, "o200k_base", Options{})
	if len(c.Warnings()) != 0 || c.Len() < 50 {
		t.Fatalf("shared cache: %d counts, warnings %q", c.Len(), c.Warnings())
	}
	for i := range 50 {
		if n, ok := c.Lookup(strings.Repeat("b", i+1)); !ok || n != i+1 {
			t.Fatalf("b's count %d lost: %d %v", i, n, ok)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d files, want 1", len(ents))
	}
}

func TestUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	c := Open(file, "o200k_base", Options{}) // a file where the directory should be
	c.Save("a", 1)
	if err := c.Flush(); err == nil {
		t.Fatal("Flush into a file's path did not fail")
	}
	if w := c.Warnings(); len(w) == 0 || !strings.Contains(w[len(w)-1], "token-count cache not saved") {
		t.Fatalf("warnings = %q", w)
	}
}

// planted is a whole count file (header, entries, checksum) holding count
// for each text: what someone writes who knows the format.
func planted(texts []string, counts []uint32) []byte {
	b := append([]byte(magic), make([]byte, 8)...)
	binary.LittleEndian.PutUint32(b[8:], version)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(texts)))
	for i, s := range texts {
		k := keyOf(s)
		b = binary.LittleEndian.AppendUint64(b, k.hash)
		b = binary.LittleEndian.AppendUint32(b, k.len)
		b = binary.LittleEndian.AppendUint32(b, counts[i])
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// TestPlantedCountsSpoiled pins issue 27's planted token-count cache: a
// file with a good checksum whose counts are larger than their texts was
// served (whatif then reported $0 and "n/a", exit 0). A count that cannot
// be right for its text (more tokens than bytes of valid UTF-8, more than
// three per byte of any text, none for a non-empty one) is a spoiled
// entry: warned about, never served, counted again, and gone from the
// file at the next flush.
func TestPlantedCountsSpoiled(t *testing.T) {
	hello := "hello world"
	for name, c := range map[string]struct {
		counts []uint32
		atOpen bool // the file refused on reading (the bound needs no text)
		kept   int  // counts held after the lookups
		// lookups: how many of hello and "ok" are looked up (0: hello);
		// each spoiled one counts in the one warning.
		lookups int
	}{
		"huge":           {counts: []uint32{1_000_000_000, 1}, atOpen: true},
		"zero":           {counts: []uint32{0, 1}, atOpen: true},
		"over its bytes": {counts: []uint32{12, 1}, kept: 1}, // "ok" is honest
		"both over":      {counts: []uint32{12, 3}, kept: 0, lookups: 2},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "o200k_base.counts")
			if err := os.WriteFile(p, planted([]string{hello, "ok"}, c.counts), 0o644); err != nil {
				t.Fatal(err)
			}
			d := Open(dir, "o200k_base", Options{})
			if n, ok := d.Lookup(hello); ok {
				t.Fatalf("served %d tokens for %q", n, hello)
			}
			if c.lookups == 2 {
				if n, ok := d.Lookup("ok"); ok {
					t.Fatalf("served %d tokens for %q", n, "ok")
				}
				d.Lookup(hello) // counted once
			}
			w := d.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "o200k_base.counts: token-count cache") || !strings.Contains(w[0], "cannot be right") {
				t.Fatalf("warnings %q, want one naming the file", w)
			}
			if c.lookups == 2 && !strings.Contains(w[0], "2 entries ignored") {
				t.Errorf("warning %q, want the 2 spoiled entries counted", w[0])
			}
			if c.atOpen != strings.Contains(w[0], "cache ignored") || d.Len() != c.kept {
				t.Errorf("at open %v: %q, %d counts kept", c.atOpen, w[0], d.Len())
			}
			d.Save(hello, 2)
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			e := Open(dir, "o200k_base", Options{})
			if n, ok := e.Lookup(hello); !ok || n != 2 || len(e.Warnings()) != 0 {
				t.Errorf("after the flush: %d %v %q", n, ok, e.Warnings())
			}
		})
	}
}

// TestPlantedFIFO: a FIFO planted as the cache file made every command
// wait in open(2) for a writer forever; it is a cache ignored, warned.
func TestPlantedFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "o200k_base.counts"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	opened := make(chan *Cache, 1)
	go func() { opened <- Open(dir, "o200k_base", Options{}) }()
	select {
	case c := <-opened:
		if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "token-count cache ignored") || !strings.Contains(w[0], "is a FIFO") {
			t.Errorf("warnings %q", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open still waiting after 5 s")
	}
}

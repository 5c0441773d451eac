package tiktoken

import (
	_ "embed"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// The rank tables, built from pkoukk/tiktoken-go-loader's .tiktoken files
// by TestTables (go test -run TestTables -update rewrites them).
var (
	//go:embed o200k_base.tkt
	o200kTable string
	//go:embed cl100k_base.tkt
	cl100kTable string
)

// An Encoding is one of tiktoken's BPE encodings. Its ranks load on the
// first Count or Encode, so a process that never counts never pays for
// them. An Encoding is safe for concurrent use.
type Encoding struct {
	name string
	next func(s string, i int) int // the pre-tokenizer
	data string                    // the embedded table

	once   sync.Once
	table  *table
	err    error
	loaded atomic.Bool
}

var (
	o200k  = &Encoding{name: "o200k_base", next: nextO200k, data: o200kTable}
	cl100k = &Encoding{name: "cl100k_base", next: nextCL100k, data: cl100kTable}
)

// Names are the encodings Get knows.
var Names = []string{"o200k_base", "cl100k_base"}

// Get returns the named encoding. It is cheap: nothing loads until the
// first count.
func Get(name string) (*Encoding, error) {
	switch name {
	case "o200k_base":
		return o200k, nil
	case "cl100k_base":
		return cl100k, nil
	}
	return nil, fmt.Errorf("tiktoken: unknown encoding %q (have o200k_base, cl100k_base)", name)
}

// Name is the encoding's name, "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Load checks the embedded ranks now rather than on the first count. It
// reads a header: the table is used where the binary holds it.
func (e *Encoding) Load() error {
	e.once.Do(func() {
		e.table, e.err = loadTable(e.data)
		if e.err != nil {
			e.err = fmt.Errorf("tiktoken: %s: %w", e.name, e.err)
		}
		e.loaded.Store(true)
	})
	return e.err
}

func (e *Encoding) mustLoad() *table {
	if err := e.Load(); err != nil {
		// The ranks are embedded in the binary: failing to parse them is
		// a build defect, not an input error.
		panic(err)
	}
	return e.table
}

// valid is text as tiktoken sees it: each byte of invalid UTF-8 becomes
// U+FFFD, as Go's []rune conversion does (and Python never passes such
// text to tiktoken).
func valid(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	return string([]rune(text))
}

// Encode returns text's token ids, special tokens treated as text (tiktoken's
// encode_ordinary).
func (e *Encoding) Encode(text string) []int {
	t := e.mustLoad()
	text = valid(text)
	var ids []uint32
	for i := 0; i < len(text); {
		j := e.next(text, i)
		if r, ok := t.rank(text[i:j]); ok {
			ids = append(ids, r)
		} else {
			ids = t.merge(text[i:j], ids)
		}
		i = j
	}
	out := make([]int, len(ids))
	for i, r := range ids {
		out[i] = int(r)
	}
	return out
}

// Count is the number of tokens Encode would return.
func (e *Encoding) Count(text string) int {
	if text == "" {
		return 0
	}
	t := e.mustLoad()
	text = valid(text)
	var buf [64]uint32
	n := 0
	for i := 0; i < len(text); {
		j := e.next(text, i)
		if _, ok := t.rank(text[i:j]); ok {
			n++
		} else {
			n += len(t.merge(text[i:j], buf[:0]))
		}
		i = j
	}
	return n
}

// LineAdditive is true: no piece of either split pattern spans a newline
// followed by a rune that is neither white space nor '/', so counts of
// text cut there add up (estimate.Memo.CountText relies on it).
func (e *Encoding) LineAdditive() bool { return true }

// Loaded reports whether the ranks have been loaded (by a count, Encode or
// Load): a command that never counts leaves them unloaded.
func (e *Encoding) Loaded() bool { return e.loaded.Load() }

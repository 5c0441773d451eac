package estimate

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
)

// A Tokenizer counts the tokens of a text. Implementations are deterministic
// and safe for concurrent use. estimate/tiktoken has the exact OpenAI
// encodings; a Go agent may supply its own.
type Tokenizer interface {
	// Name is the encoding's name ("o200k_base"); counts are memoized under it.
	Name() string
	Count(text string) int
}

// A LineAdditive tokenizer's count of a text is the sum of its counts of
// the lines CountText cuts it into (see CountText): true of the tiktoken
// encodings, whose pre-tokenizer pieces never span such a cut.
type LineAdditive interface {
	LineAdditive() bool
}

// A Store keeps counts beyond one process (estimate/tokcache's Cache is
// one): a Memo asks it before tokenizing a text it has not seen, and tells
// it every count it makes. Implementations key on the text's content and
// are safe for concurrent use.
type Store interface {
	Lookup(text string) (int, bool)
	Save(text string, n int)
}

// A Memo counts blocks with a tokenizer, once per distinct block content: the
// count is kept under the block's hash. One Memo is shared by everything in
// a process that uses the same tokenizer; it is safe for concurrent use.
type Memo struct {
	tok    Tokenizer
	store  Store
	lineOK bool
	calls  atomic.Int64 // tokenizer calls
	mu     sync.RWMutex
	counts map[uint64]int
	lines  map[uint64]int // CountText's, by the line's hash
	msgs   map[uint64]int // countMessage's, by the message's hash
}

// NewMemo returns a memo over tok.
func NewMemo(tok Tokenizer) *Memo {
	la, ok := tok.(LineAdditive)
	return &Memo{tok: tok, lineOK: ok && la.LineAdditive(), counts: map[uint64]int{}, lines: map[uint64]int{}, msgs: map[uint64]int{}}
}

// SetStore makes m ask s for counts before tokenizing, and tell s every
// count it makes. Set it before the first count.
func (m *Memo) SetStore(s Store) { m.store = s }

// Tokenized is the number of texts m has handed to its tokenizer: what a
// Store saved is not among them.
func (m *Memo) Tokenized() int64 { return m.calls.Load() }

// count is the count of text, from the store when it has it.
func (m *Memo) count(text string) int {
	if m.store != nil {
		if n, ok := m.store.Lookup(text); ok {
			return n
		}
	}
	m.calls.Add(1)
	n := m.tok.Count(text)
	if m.store != nil {
		m.store.Save(text, n)
	}
	return n
}

var (
	memosMu sync.Mutex
	memos   = map[string]*Memo{}
)

// SharedMemo returns the process-wide memo for tok's encoding.
func SharedMemo(tok Tokenizer) *Memo {
	memosMu.Lock()
	defer memosMu.Unlock()
	m, ok := memos[tok.Name()]
	if !ok {
		m = NewMemo(tok)
		memos[tok.Name()] = m
	}
	return m
}

// Count is the token count of b: its Tokens for an opaque block, the
// tokenizer's count of its text otherwise.
func (m *Memo) Count(b *traces.Block) int {
	if b.Opaque() {
		return b.Tokens
	}
	return m.CountHash(b, b.Hash())
}

// CountHash is Count for a caller that has b's hash h already (a
// prompt.Counter): the block is not hashed again.
func (m *Memo) CountHash(b *traces.Block, h uint64) int {
	if b.Opaque() {
		return b.Tokens
	}
	m.mu.RLock()
	n, ok := m.counts[h]
	m.mu.RUnlock()
	if ok {
		return n
	}
	n = m.count(b.TokenText())
	m.mu.Lock()
	m.counts[h] = n
	m.mu.Unlock()
	return n
}

// CountText is the tokenizer's count of s, memoized line by line: text
// made of lines seen before (a summarizer's prompt is the transcript it
// summarizes, and a sweep summarizes the same transcript under many
// policies) costs a hash and a map lookup per line instead of a BPE pass,
// which is the one part of a count that costs.
//
// The sum is exact for the tiktoken encodings: s is cut only after a
// newline followed by a character that is neither white space nor '/', and
// no pre-tokenizer piece of o200k_base or cl100k_base spans such a point
// (o200k's punctuation piece may run on through newlines and '/', hence
// the '/'). Tokenizers that are not LineAdditive count s whole.
func (m *Memo) CountText(s string) int {
	if !m.lineOK {
		return m.count(s)
	}
	n := 0
	for s != "" {
		line := s[:lineEnd(s)]
		s = s[len(line):]
		h := traces.HashString(line)
		m.mu.RLock()
		c, ok := m.lines[h]
		m.mu.RUnlock()
		if !ok {
			c = m.count(line)
			m.mu.Lock()
			m.lines[h] = c
			m.mu.Unlock()
		}
		n += c
	}
	return n
}

// lineEnd is the length of s's first line as CountText cuts it: through a
// newline whose next character is not white space or '/', else all of s.
func lineEnd(s string) int {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i == len(s) {
			break
		}
		if cutsBefore(s[i:]) {
			return i
		}
	}
	return len(s)
}

// cutsBefore reports whether a line CountText cuts may end just before s
// (after a newline): s's first character is not white space or '/'.
func cutsBefore(s string) bool {
	if c := s[0]; c < utf8.RuneSelf {
		return c != '/' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return !unicode.IsSpace(r)
}

// CountTexts is CountText of the parts joined, without joining those that
// CountText would cut between anyway (a part ending in a newline before
// one that cutsBefore, with its first character whole): a summarizer's
// prompt is a transcript of tens of KB followed by short parts.
func (m *Memo) CountTexts(parts ...string) int {
	if !m.lineOK {
		return m.count(strings.Join(parts, ""))
	}
	n, pending := 0, ""
	for _, p := range parts {
		switch {
		case p == "":
		case pending == "":
			pending = p
		case strings.HasSuffix(pending, "\n") && utf8.FullRuneInString(p) && cutsBefore(p):
			n += m.CountText(pending)
			pending = p
		default:
			pending += p
		}
	}
	return n + m.CountText(pending)
}

// Len is the number of distinct blocks counted so far.
func (m *Memo) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.counts)
}

// Warm counts every block of the sessions not yet counted, on all cores.
// Tokenization is the dominant cost of a replay; doing it up front in
// parallel makes the replays that follow cheap and order-independent.
func (m *Memo) Warm(sessions []*traces.Session) {
	type hashed struct {
		b *traces.Block
		h uint64
	}
	seen := map[uint64]bool{}
	var todo []hashed
	add := func(b *traces.Block) {
		if b.Opaque() {
			return
		}
		h := b.Hash()
		if seen[h] {
			return
		}
		seen[h] = true
		m.mu.RLock()
		_, ok := m.counts[h]
		m.mu.RUnlock()
		if !ok {
			todo = append(todo, hashed{b, h})
		}
	}
	for _, s := range sessions {
		for i := range s.Floor {
			add(&s.Floor[i])
		}
		for i := range s.Events {
			for j := range s.Events[i].Blocks {
				add(&s.Events[i].Blocks[j])
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	ch := make(chan hashed, 256)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ch {
				m.CountHash(b.b, b.h)
			}
		}()
	}
	for _, b := range todo {
		ch <- b
	}
	close(ch)
	wg.Wait()
}

package estimate

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ctxsim/ctxsim/traces"
)

// A Tokenizer counts the tokens of a text. Implementations are deterministic
// and safe for concurrent use.
type Tokenizer interface {
	// Name is the encoding's name ("o200k_base"); counts are memoized under it.
	Name() string
	Count(text string) int
}

var loadOnce sync.Once

// Tiktoken returns the tiktoken encoding name (o200k_base or cl100k_base).
// BPE tables come from the embedded offline loader: nothing is downloaded.
func Tiktoken(name string) (Tokenizer, error) {
	switch name {
	case "o200k_base", "cl100k_base":
	default:
		return nil, fmt.Errorf("estimate: unknown encoding %q (have o200k_base, cl100k_base)", name)
	}
	loadOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("estimate: load %s: %w", name, err)
	}
	return &tiktok{name: name, enc: enc}, nil
}

type tiktok struct {
	name string
	enc  *tiktoken.Tiktoken
}

func (t *tiktok) Name() string { return t.name }

func (t *tiktok) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(t.enc.EncodeOrdinary(text))
}

// A Memo counts blocks with a tokenizer, once per distinct block content: the
// count is kept under the block's hash. One Memo is shared by everything in
// a process that uses the same tokenizer; it is safe for concurrent use.
type Memo struct {
	tok    Tokenizer
	mu     sync.RWMutex
	counts map[uint64]int
	lines  map[uint64]int // CountText's, by the line's hash
}

// NewMemo returns a memo over tok.
func NewMemo(tok Tokenizer) *Memo {
	return &Memo{tok: tok, counts: map[uint64]int{}, lines: map[uint64]int{}}
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
	h := b.Hash()
	m.mu.RLock()
	n, ok := m.counts[h]
	m.mu.RUnlock()
	if ok {
		return n
	}
	n = m.tok.Count(b.TokenText())
	m.mu.Lock()
	m.counts[h] = n
	m.mu.Unlock()
	return n
}

// CountText is the tokenizer's count of s, memoized line by line: text
// made of lines seen before (a summarizer's prompt is the transcript it
// summarizes, and a sweep summarizes the same transcript under many
// policies) costs a hash and a map lookup per line instead of a BPE pass,
// which runs at about 2 MB/s.
//
// The sum is exact for the tiktoken encodings: s is cut only after a
// newline followed by a character that is neither white space nor '/', and
// no pre-tokenizer piece of o200k_base or cl100k_base spans such a point
// (o200k's punctuation piece may run on through newlines and '/', hence
// the '/'). Other tokenizers count s whole.
func (m *Memo) CountText(s string) int {
	if _, ok := m.tok.(*tiktok); !ok {
		return m.tok.Count(s)
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
			c = m.tok.Count(line)
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
		if c := s[i]; c < utf8.RuneSelf {
			if c != '/' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
				return i
			}
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[i:]); !unicode.IsSpace(r) {
			return i
		}
	}
	return len(s)
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
	seen := map[uint64]bool{}
	var todo []*traces.Block
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
			todo = append(todo, b)
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
	ch := make(chan *traces.Block, 256)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ch {
				m.Count(b)
			}
		}()
	}
	for _, b := range todo {
		ch <- b
	}
	close(ch)
	wg.Wait()
}

package tokcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
)

// The file: a header (magic, version, entry count), entries oldest first,
// and the xxhash of everything before it.
const (
	magic      = "ctxsimtc"
	version    = 1
	headerSize = 16
	entrySize  = 16 // text hash, text length, count
	sumSize    = 8
)

// DefaultMaxEntries bounds a file at 16 MiB.
const DefaultMaxEntries = 1 << 20

// Options tune a Cache.
type Options struct {
	// MaxEntries is the most counts a file keeps (DefaultMaxEntries if 0);
	// the least recently used go first.
	MaxEntries int
}

type key struct {
	hash uint64
	len  uint32
}

func keyOf(text string) key {
	return key{hash: xxhash.Sum64String(text), len: uint32(len(text))}
}

// A Cache is the persistent counts of one encoding. It is safe for
// concurrent use.
type Cache struct {
	path string
	max  int

	mu       sync.Mutex
	counts   map[key]uint32
	old      []key        // entries read at Open, in file order
	used     []key        // entries looked up or saved since Open, first use first
	usedSet  map[key]bool // of used
	dirty    bool         // a count was saved
	hits     int
	warnings []string
	spoiled  map[key]bool // entries found impossible at Lookup: never served or written again
	// firstSpoiled is the first of spoiled, for its warning: count, bytes.
	firstSpoiled [2]uint32
}

// maxTokensPerByte bounds a count by its text's length: a BPE token is at
// least one byte, and a tokenizer replaces each invalid UTF-8 byte by
// U+FFFD, three bytes (tiktoken's valid), so no text of n bytes has more
// than 3n tokens; valid UTF-8 has at most n (checked at Lookup, where the
// text is known). A non-empty text has at least one.
const maxTokensPerByte = 3

// possible reports whether count can be a count of a text of length n.
func possible(count uint32, n uint32) bool {
	if n == 0 {
		return count == 0
	}
	return count >= 1 && uint64(count) <= maxTokensPerByte*uint64(n)
}

// Open reads the cache of encoding enc in dir. It never fails: a missing
// file is an empty cache, an unreadable or corrupt one an empty cache and a
// warning.
func Open(dir, enc string, o Options) *Cache {
	keys, counts, err := read(filepath.Join(dir, enc+".counts"))
	// Sized once: a warm run looks up most of them, so they are its set
	// of used keys too.
	c := &Cache{
		path:    filepath.Join(dir, enc+".counts"),
		max:     o.MaxEntries,
		counts:  make(map[key]uint32, len(keys)),
		usedSet: make(map[key]bool, len(keys)),
	}
	if c.max <= 0 {
		c.max = DefaultMaxEntries
	}
	if err != nil {
		c.warnings = append(c.warnings, err.Error())
	}
	c.old = keys
	for i, k := range keys {
		c.counts[k] = counts[i]
	}
	return c
}

// read parses the file at path. A missing file is not an error.
func read(path string) ([]key, []uint32, error) {
	b, err := atomicfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: token-count cache ignored: %v", path, err)
	}
	bad := func(reason string) ([]key, []uint32, error) {
		return nil, nil, fmt.Errorf("%s: token-count cache ignored: %s", path, reason)
	}
	if len(b) < headerSize+sumSize || !bytes.Equal(b[:8], []byte(magic)) {
		return bad("not a ctxsim count cache")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != version {
		return bad(fmt.Sprintf("version %d, want %d", v, version))
	}
	n := int(binary.LittleEndian.Uint32(b[12:]))
	if len(b) != headerSize+n*entrySize+sumSize {
		return bad(fmt.Sprintf("%d bytes for %d entries", len(b), n))
	}
	body := b[:len(b)-sumSize]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(b[len(body):]) {
		return bad("checksum mismatch")
	}
	keys := make([]key, n)
	counts := make([]uint32, n)
	for i := range n {
		e := body[headerSize+i*entrySize:]
		keys[i] = key{hash: binary.LittleEndian.Uint64(e), len: binary.LittleEndian.Uint32(e[8:])}
		counts[i] = binary.LittleEndian.Uint32(e[12:])
		if !possible(counts[i], keys[i].len) {
			// A checksum proves only that the file is whole: a planted or
			// miscomputed count is as spoiled as a flipped bit, and the
			// other counts of its file no more trustworthy.
			return bad(fmt.Sprintf("entry %d: %d tokens for a text of %d bytes cannot be right", i+1, counts[i], keys[i].len))
		}
	}
	return keys, counts, nil
}

func (c *Cache) touch(k key) {
	if !c.usedSet[k] {
		c.usedSet[k] = true
		c.used = append(c.used, k)
	}
}

// Lookup is the saved count of text, if any. A count over the length of
// a valid UTF-8 text cannot be right (a token is at least one byte): the
// entry is spoiled, dropped with a warning, and text counted again.
func (c *Cache) Lookup(text string) (int, bool) {
	k := keyOf(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.counts[k]
	if ok && int(n) > len(text) && utf8.ValidString(text) {
		c.spoil(k, n)
		return 0, false
	}
	if ok {
		c.hits++
		c.touch(k)
	}
	return int(n), ok
}

func (c *Cache) spoil(k key, n uint32) {
	if c.spoiled == nil {
		c.spoiled = map[key]bool{}
		c.firstSpoiled = [2]uint32{n, k.len}
	}
	c.spoiled[k] = true
	delete(c.counts, k)
	c.dirty = true // rewritten without it
}

// Save records text's count.
func (c *Cache) Save(text string, n int) {
	if n < 0 || int64(n) > int64(^uint32(0)) || !possible(uint32(n), uint32(len(text))) {
		return
	}
	k := keyOf(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.counts[k]; ok && old == uint32(n) {
		c.touch(k)
		return
	}
	c.counts[k] = uint32(n)
	c.touch(k)
	c.dirty = true
}

// Hits is the number of lookups the cache answered.
func (c *Cache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// Len is the number of counts held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.counts)
}

// Warnings are the problems met reading or writing the file, one line each
// ("path: reason"). None of them stops a run: the cache just counts again.
// The entries spoiled at Lookup are one warning, counted, naming the first.
func (c *Cache) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.warnings...)
	if n := len(c.spoiled); n > 0 {
		entries := "1 entry"
		if n > 1 {
			entries = fmt.Sprintf("%d entries", n)
		}
		out = append(out, fmt.Sprintf("%s: token-count cache: %s ignored, counted again: a count that cannot be right for its text (the first: %d tokens for a text of %d bytes)",
			c.path, entries, c.firstSpoiled[0], c.firstSpoiled[1]))
	}
	return out
}

// Flush writes the counts to the file if any was saved since Open: what is
// on disk now (another process may have flushed) merged with this
// process's counts, the most recently used last, at most MaxEntries.
func (c *Cache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	// Oldest first: what is on disk now and what was read at Open, unless
	// used since; then what this process used, in first-use order.
	diskKeys, diskCounts, err := read(c.path)
	if err != nil {
		c.warnings = append(c.warnings, err.Error())
	}
	var order []key
	seen := map[key]bool{}
	for i, k := range diskKeys {
		if c.spoiled[k] {
			continue
		}
		if _, ok := c.counts[k]; !ok {
			c.counts[k] = diskCounts[i]
		}
		if !c.usedSet[k] && !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	for _, k := range c.old {
		if !c.usedSet[k] && !seen[k] && !c.spoiled[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	order = append(order, c.used...)
	if len(order) > c.max {
		order = order[len(order)-c.max:]
	}
	buf := make([]byte, headerSize, headerSize+len(order)*entrySize+sumSize)
	copy(buf, magic)
	binary.LittleEndian.PutUint32(buf[8:], version)
	binary.LittleEndian.PutUint32(buf[12:], uint32(len(order)))
	for _, k := range order {
		buf = binary.LittleEndian.AppendUint64(buf, k.hash)
		buf = binary.LittleEndian.AppendUint32(buf, k.len)
		buf = binary.LittleEndian.AppendUint32(buf, c.counts[k])
	}
	buf = binary.LittleEndian.AppendUint64(buf, xxhash.Sum64(buf))
	if err := atomicfile.Write(c.path, buf, true); err != nil {
		err = fmt.Errorf("%s: token-count cache not saved: %w", c.path, err)
		c.warnings = append(c.warnings, err.Error())
		return err
	}
	c.dirty = false
	return nil
}

package hindcache

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/internal/cachedir"
	"github.com/ctxsim/ctxsim/sim/hindsight"
)

const (
	magic  = "ctxsimh1"
	suffix = ".opt"
	// DefaultMaxBytes bounds the entries' total size: a result is a few
	// bytes per call, so this is thousands of whatif runs' worth.
	DefaultMaxBytes = 64 << 20
)

// Options configure a Cache.
type Options struct {
	// Build names the program that solves (BuildID of the executable):
	// another build's entry is a miss. Required.
	Build string
	// MaxBytes bounds the entries' total size (DefaultMaxBytes if 0).
	MaxBytes int64
	// Now, when set, dates a hit, so Flush keeps what is used.
	Now func() time.Time
}

// Stats is what a Cache did: results found and results written.
type Stats struct{ Hits, Puts int }

// A Cache is a directory of solved optima. Safe for concurrent use, and
// for several processes on one directory (each file is written whole and
// renamed into place).
type Cache struct {
	dir string
	o   Options

	mu       sync.Mutex
	warnings []string
	stats    Stats
	// off: a write failed (a read-only or full disk), so the rest of the
	// run writes nothing rather than failing again on every cell.
	off bool
}

// Open returns the cache in dir, made on the first Put.
func Open(dir string, o Options) *Cache {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return &Cache{dir: dir, o: o}
}

// path names k's entry for this build: two builds sharing the directory
// (an installed ctxsim and a test binary) keep one file each.
func (c *Cache) path(k hindsight.Key) string {
	return filepath.Join(c.dir, fmt.Sprintf("%s-%016x%s", hex.EncodeToString(k[:]), xxhash.Sum64String(c.o.Build), suffix))
}

// warn records a problem once: two cells with the same requests may both
// meet a spoiled entry, whichever runs first.
func (c *Cache) warn(format string, args ...any) {
	w := "hindsight cache: " + fmt.Sprintf(format, args...)
	c.mu.Lock()
	if !slices.Contains(c.warnings, w) {
		c.warnings = append(c.warnings, w)
	}
	c.mu.Unlock()
}

// Get is the result stored under k by this build, if any. An entry that
// does not check is a warning and a miss.
func (c *Cache) Get(k hindsight.Key) (*hindsight.Result, bool) {
	p := c.path(k)
	b, err := atomicfile.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn("%v (ignored)", err)
		}
		return nil, false
	}
	r, err := decode(b, k, c.o.Build)
	if err != nil {
		c.warn("%s: %v (ignored, solved again)", p, err)
		return nil, false
	}
	if r == nil {
		return nil, false // another build's, whose format may differ
	}
	if c.o.Now != nil {
		t := c.o.Now()
		_ = os.Chtimes(p, t, t) // a failure only ages the entry
	}
	c.mu.Lock()
	c.stats.Hits++
	c.mu.Unlock()
	return r, true
}

// Put stores r under k. A failed write is a warning, the only one: the
// rest of the run stores nothing, and the next run solves again.
func (c *Cache) Put(k hindsight.Key, r *hindsight.Result) {
	body, err := r.MarshalBinary()
	if err != nil {
		c.warn("%v (not kept)", err)
		return
	}
	c.mu.Lock()
	off := c.off
	c.mu.Unlock()
	if off {
		return
	}
	if err := atomicfile.Write(c.path(k), encode(c.o.Build, k, body), false); err != nil {
		c.mu.Lock()
		if !c.off {
			c.off = true
			c.warnings = append(c.warnings, fmt.Sprintf("hindsight cache: %v (nothing more kept this run)", err))
		}
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	c.stats.Puts++
	c.mu.Unlock()
}

// encode is an entry: the build, the key and the result, sealed.
func encode(build string, k hindsight.Key, body []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(build)))
	b = append(b, build...)
	b = append(b, k[:]...)
	return cachedir.Seal(magic, append(b, body...))
}

// decode is the result encode sealed under k by build, nil (no error)
// when another build wrote it: its result is not even decoded.
func decode(b []byte, k hindsight.Key, build string) (*hindsight.Result, error) {
	body, err := cachedir.Unseal(b, magic, "a hindsight cache entry")
	if err != nil {
		return nil, err
	}
	n, w := binary.Uvarint(body)
	if w <= 0 || n > uint64(len(body)-w) {
		return nil, errors.New("bad build name")
	}
	if string(body[w:w+int(n)]) != build {
		return nil, nil
	}
	body = body[w+int(n):]
	if len(body) < len(k) || string(body[:len(k)]) != string(k[:]) {
		return nil, errors.New("entry of another key")
	}
	r := &hindsight.Result{}
	if err := r.UnmarshalBinary(body[len(k):]); err != nil {
		return nil, err
	}
	return r, nil
}

// Flush removes the least recently used entries beyond MaxBytes, and
// temporary files a crashed writer left an hour ago or more.
func (c *Cache) Flush() error {
	c.mu.Lock()
	puts := c.stats.Puts
	c.mu.Unlock()
	if puts == 0 {
		return nil
	}
	return cachedir.Trim(c.dir, func(name string) bool { return strings.HasSuffix(name, suffix) }, nil, c.o.MaxBytes, c.o.Now)
}

// Warnings are the problems met so far, in order.
func (c *Cache) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.warnings)
}

// Stats is what c did so far.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

package hindcache

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

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

// Options configure a Cache: Build (required) names the program that
// solves, MaxBytes defaults to DefaultMaxBytes.
type Options = cachedir.Options

// Stats is what a Cache did: results found and results written.
type Stats struct{ Hits, Puts int }

// A Cache is a directory of solved optima. Safe for concurrent use, and
// for several processes on one directory (each file is written whole and
// renamed into place).
type Cache struct {
	d *cachedir.Dir

	mu    sync.Mutex
	stats Stats
}

// Open returns the cache in dir, made on the first Put.
func Open(dir string, o Options) *Cache {
	return &Cache{d: cachedir.NewDir(dir, "hindsight cache", o, DefaultMaxBytes)}
}

// path names k's entry for this build: two builds sharing the directory
// (an installed ctxsim and a test binary) keep one file each.
func (c *Cache) path(k hindsight.Key) string {
	return filepath.Join(c.d.Path, fmt.Sprintf("%s-%016x%s", hex.EncodeToString(k[:]), xxhash.Sum64String(c.d.Build), suffix))
}

// Get is the result stored under k by this build, if any. An entry that
// does not check is a warning and a miss.
func (c *Cache) Get(k hindsight.Key) (*hindsight.Result, bool) {
	p := c.path(k)
	b, err := atomicfile.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.d.Warn("%v (ignored)", err) // two cells with the same requests may both meet it
		}
		return nil, false
	}
	r, err := decode(b, k, c.d.Build)
	if err != nil {
		c.d.Warn("%s: %v (ignored, solved again)", p, err)
		return nil, false
	}
	if r == nil {
		return nil, false // another build's, whose format may differ
	}
	c.d.Touch(p)
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
		c.d.Warn("%v (not kept)", err)
		return
	}
	if c.d.Off() {
		return
	}
	if err := atomicfile.Write(c.path(k), encode(c.d.Build, k, body), false); err != nil {
		c.d.TurnOff(err, "nothing more kept this run")
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
	return c.d.Trim(c.Stats().Puts > 0, func(name string) bool { return strings.HasSuffix(name, suffix) }, nil)
}

// Warnings are the problems met so far, in order.
func (c *Cache) Warnings() []string { return c.d.Warnings() }

// Stats is what c did so far.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

package cachedir

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// Options are what a cache of entries takes (traces/filecache's imports,
// sim/hindsight/hindcache's optima).
type Options struct {
	// Build names the program that made the entries (the executable's
	// Go build ID): an entry another build wrote is a miss, so a changed
	// program never serves what the old one computed.
	Build string
	// MaxBytes bounds the entries' total size (the cache's default if 0):
	// Flush removes the least recently used beyond it.
	MaxBytes int64
	// Now, when set, dates a hit (the entry's modification time), so that
	// Flush keeps what is used; without it entries age from their writing.
	Now func() time.Time
}

// A Dir is a cache's directory of entries and what the cache met there:
// its options, its warnings (each prefixed with the cache's name) and,
// once a write failed, its being off for the rest of the run. Every
// problem is a warning, never a failed run. Safe for concurrent use.
type Dir struct {
	Path string
	Options
	name string

	mu       sync.Mutex
	warnings []string
	off      bool
}

// NewDir is the directory path of the cache called name in its warnings
// ("import cache"), MaxBytes defaulting to maxBytes.
func NewDir(path, name string, o Options, maxBytes int64) *Dir {
	if o.MaxBytes <= 0 {
		o.MaxBytes = maxBytes
	}
	return &Dir{Path: path, Options: o, name: name}
}

// Warn records a problem, once: two lookups may meet the same spoiled
// entry.
func (d *Dir) Warn(format string, args ...any) {
	w := d.name + ": " + fmt.Sprintf(format, args...)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.warnings, w) {
		d.warnings = append(d.warnings, w)
	}
}

// TurnOff stops the cache after err (a read-only or full disk), with one
// warning ending in why, so the rest of the run does not fail again on
// every entry.
func (d *Dir) TurnOff(err error, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.off {
		d.off = true
		d.warnings = append(d.warnings, fmt.Sprintf("%s: %v (%s)", d.name, err, why))
	}
}

// Off reports whether TurnOff was called.
func (d *Dir) Off() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.off
}

// Warnings are the problems met so far, in order.
func (d *Dir) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.warnings)
}

// Touch dates a hit on the entry at path, given a clock; a failure only
// ages the entry.
func (d *Dir) Touch(path string) {
	if d.Now != nil {
		t := d.Now()
		_ = os.Chtimes(path, t, t)
	}
}

// Trim keeps the directory within MaxBytes (Trim), when wrote: a run that
// wrote nothing leaves it as it was.
func (d *Dir) Trim(wrote bool, entry, drop func(name string) bool) error {
	if !wrote {
		return nil
	}
	return Trim(d.Path, entry, drop, d.MaxBytes, d.Now)
}

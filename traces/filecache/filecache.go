package filecache

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/internal/cachedir"
	"github.com/ctxsim/ctxsim/traces"
)

// An entry file: an entry as codec.go writes it, sealed with magic
// (cachedir.Seal).
const (
	magic  = "ctxsimf3"
	suffix = ".entry"
	// legacySuffix names the gob entries of earlier builds, which no
	// build reads now: Flush removes them.
	legacySuffix = ".gob"
)

// DefaultMaxBytes bounds the directory at 1 GiB.
const DefaultMaxBytes = 1 << 30

// Options tune a Cache: Build (required) names the program whose
// importers made the entries (BuildID), so a changed importer never serves
// what the old one read; MaxBytes defaults to DefaultMaxBytes.
type Options = cachedir.Options

// entry is what one file holds.
type entry struct {
	Build    string
	Key      traces.FileKey
	Sessions []*traces.Session
	Warnings *traces.Warnings
}

// A Cache is a traces.FileCache in a directory, one file per entry. It is
// safe for concurrent use, and several processes may share a directory:
// entries are written whole (a temporary file renamed into place) and
// carry a checksum.
type Cache struct {
	// d is turned off by the first failure to read or write the
	// directory (not a directory, no space, no permission): one warning
	// says so, and the run goes on without the cache rather than warning
	// per file.
	d *cachedir.Dir

	mu        sync.Mutex
	hits      int
	puts      int
	stampHits int
	stamps    int
}

// Open returns the cache in dir (made at the first Put).
func Open(dir string, o Options) (*Cache, error) {
	if o.Build == "" {
		return nil, errors.New("filecache: no build id")
	}
	return &Cache{d: cachedir.NewDir(dir, "import cache", o, DefaultMaxBytes)}, nil
}

// path is the entry file of key: a hash of the build and the key.
func (c *Cache) path(key traces.FileKey) string {
	h := xxhash.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d", c.d.Build, key.Format, key.Name, key.Sum, key.Size)
	return filepath.Join(c.d.Path, fmt.Sprintf("%016x%s", h.Sum64(), suffix))
}

// Get implements traces.FileCache. A missing entry is a plain miss; one
// that is short, fails its checksum or does not decode is a miss with a
// warning (Warnings), and is replaced by the next Put.
func (c *Cache) Get(key traces.FileKey) ([]*traces.Session, *traces.Warnings, bool) {
	if c.d.Off() {
		return nil, nil, false
	}
	p := c.path(key)
	b, err := atomicfile.ReadFile(p) // a buffer of its own: the entry's strings alias it
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.d.TurnOff(err, goingWithout)
		}
		return nil, nil, false
	}
	e, err := decode(b)
	if err != nil {
		c.d.Warn("%s: %v (ignored, re-imported)", p, err)
		return nil, nil, false
	}
	if e.Build != c.d.Build || e.Key != key {
		return nil, nil, false // a hash collision: someone else's entry
	}
	c.d.Touch(p)
	c.mu.Lock()
	c.hits++
	c.mu.Unlock()
	return e.Sessions, e.Warnings, true
}

func decode(b []byte) (*entry, error) {
	body, err := cachedir.Unseal(b, magic, "an import cache entry")
	if err != nil {
		return nil, err
	}
	e, err := decodeEntry(body)
	if err != nil {
		return nil, fmt.Errorf("bad entry: %v", err)
	}
	return e, nil
}

// Put implements traces.FileCache. A failed write is a warning: the run
// goes on, the next one imports the file again.
func (c *Cache) Put(key traces.FileKey, ss []*traces.Session, w *traces.Warnings) {
	if c.d.Off() {
		return
	}
	var e encoder
	if err := e.entry(&entry{Build: c.d.Build, Key: key, Sessions: ss, Warnings: w}); err != nil {
		c.d.Warn("%s: %v (not cached)", key.Name, err)
		return
	}
	if err := atomicfile.Write(c.path(key), cachedir.Seal(magic, e.b), false); err != nil {
		c.d.TurnOff(err, goingWithout)
		return
	}
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
}

// goingWithout ends the warning of the failure that turns the cache off.
const goingWithout = "going without it for the rest of the run"

// Stats counts a Cache's work since Open.
type Stats struct {
	Hits      int // Gets served
	StampHits int // stamps trusted: files not read, but for an entry that failed
	Puts      int // entries written
	Stamps    int // stamps remembered
}

// Stats is what c has done so far.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Hits: c.hits, StampHits: c.stampHits, Puts: c.puts, Stamps: c.stamps}
}

// Warnings are the problems met, in order.
func (c *Cache) Warnings() []string { return c.d.Warnings() }

// Flush keeps the directory within MaxBytes, removing the entries used
// least recently (oldest modification time, then name; a stamp dates from
// its writing), earlier builds' gob entries and, given a clock
// (Options.Now), the temporary files a killed writer left more than an
// hour ago; it does nothing when nothing was put.
func (c *Cache) Flush() error {
	st := c.Stats()
	return c.d.Trim(st.Puts+st.Stamps > 0, func(name string) bool {
		return strings.HasSuffix(name, suffix) || strings.HasSuffix(name, stampSuffix)
	}, func(name string) bool { return strings.HasSuffix(name, legacySuffix) })
}

// OpenExecutable opens the cache in dir for the running program: its
// build is the executable's Go build ID (BuildID), and now dates hits.
func OpenExecutable(dir string, now func() time.Time) (*Cache, error) {
	id, err := ExecutableBuild()
	if err != nil {
		return nil, err
	}
	return Open(dir, Options{Build: id, Now: now})
}

// ExecutableBuild is the BuildID of the running program: what the caches
// that must not outlive a rebuild key their entries by.
func ExecutableBuild() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return BuildID(exe)
}

// BuildID is the Go build ID of the executable at path (os.Executable for
// the running program): it changes whenever any of the program's sources
// or build settings do, which is what makes a cached import safe to reuse.
// It reads the ELF note the Go linker writes, else looks for the marker
// the linker puts at the start of the text on other platforms.
func BuildID(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			b, err := s.Data()
			// A note: name size, data size, type (4 bytes each), the
			// name "Go\x00\x00", the data.
			if err == nil && len(b) > 16 && string(b[12:16]) == "Go\x00\x00" {
				n := int(f.ByteOrder.Uint32(b[4:8]))
				if 16+n <= len(b) && n > 0 {
					return string(b[16 : 16+n]), nil
				}
			}
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", err
	}
	head = head[:n]
	const start, end = "\xff Go build ID: \"", "\"\n \xff"
	if i := bytes.Index(head, []byte(start)); i >= 0 {
		rest := head[i+len(start):]
		if j := bytes.Index(rest, []byte(end)); j > 0 {
			return string(rest[:j]), nil
		}
	}
	return "", fmt.Errorf("%s: no Go build ID", path)
}

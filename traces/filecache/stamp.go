package filecache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/internal/cachedir"
	"github.com/ctxsim/ctxsim/traces"
)

// A stamp file: stampMagic, a stampEntry (encodeStamp), its xxhash.
const (
	stampMagic  = "ctxsimst"
	stampSuffix = ".stamp"
)

// RacyWindow is how much older than its stamp file a file's modification
// and change times must be for Lookup to trust the stamp. File system
// clocks are coarse (the kernel's tick on Linux, a second on some file
// systems, two on FAT), so a file changed again within the tick of its
// last change can keep its stamp; a stamp remembered well after that tick
// cannot be fooled so. Git trusts its index the same way ("racy git":
// an entry is trusted only when the file is older than the index).
const RacyWindow = 2 * time.Second

// stampEntry is what a stamp file holds.
type stampEntry struct {
	Build string
	Stamp traces.FileStamp
	Key   traces.FileKey
}

func encodeStamp(x stampEntry) []byte {
	var e encoder
	e.str(x.Build)
	s := x.Stamp
	e.str(s.Format)
	e.str(s.Name)
	e.varint(s.Size)
	e.varint(s.ModTime)
	e.varint(s.ChangeTime)
	e.uvarint(s.Dev)
	e.uvarint(s.Ino)
	e.str(x.Key.Format)
	e.str(x.Key.Name)
	e.uvarint(x.Key.Sum)
	e.varint(x.Key.Size)
	return e.b
}

func decodeStamp(b []byte) (stampEntry, error) {
	d := &decoder{b: b}
	x := stampEntry{Build: d.str()}
	x.Stamp = traces.FileStamp{Format: d.str(), Name: d.str(), Size: d.varint(), ModTime: d.varint(), ChangeTime: d.varint(), Dev: d.uvarint(), Ino: d.uvarint()}
	x.Key = traces.FileKey{Format: d.str(), Name: d.str(), Sum: d.uvarint(), Size: d.varint()}
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("trailing bytes")
	}
	return x, d.err
}

func (c *Cache) stampPath(s traces.FileStamp) string {
	h := xxhash.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d\x00%d\x00%d\x00%d", c.d.Build, s.Format, s.Name, s.Size, s.ModTime, s.ChangeTime, s.Dev, s.Ino)
	return filepath.Join(c.d.Path, fmt.Sprintf("%016x%s", h.Sum64(), stampSuffix))
}

// Lookup implements traces.StampedCache: the contents remembered for s by
// this build, unless the stamp file is missing, spoiled (a warning) or
// racy (written within RacyWindow of the file's last change).
func (c *Cache) Lookup(s traces.FileStamp) (traces.FileKey, bool) {
	if c.d.Off() {
		return traces.FileKey{}, false
	}
	p := c.stampPath(s)
	f, err := atomicfile.Open(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.d.TurnOff(err, goingWithout)
		}
		return traces.FileKey{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		c.d.TurnOff(err, goingWithout)
		return traces.FileKey{}, false
	}
	b, err := io.ReadAll(f)
	if err != nil {
		c.d.TurnOff(err, goingWithout)
		return traces.FileKey{}, false
	}
	body, err := cachedir.Unseal(b, stampMagic, "an import cache entry")
	var e stampEntry
	if err == nil {
		e, err = decodeStamp(body)
	}
	if err != nil {
		c.d.Warn("%s: %v (ignored, the file is read)", p, err)
		return traces.FileKey{}, false
	}
	if e.Build != c.d.Build || e.Stamp != s || e.Key.Format != s.Format || e.Key.Name != s.Name || e.Key.Size != s.Size {
		return traces.FileKey{}, false // a hash collision, or not this file's
	}
	if max(s.ModTime, s.ChangeTime) > fi.ModTime().UnixNano()-int64(RacyWindow) {
		return traces.FileKey{}, false // racy: read it, and Remember again
	}
	c.mu.Lock()
	c.stampHits++
	c.mu.Unlock()
	return e.Key, true
}

// Remember implements traces.StampedCache. A stamp file is never touched
// once written: its modification time is when it was remembered, which is
// what Lookup's racy test needs. A failed write is handled as Put's.
func (c *Cache) Remember(s traces.FileStamp, key traces.FileKey) {
	if c.d.Off() || key.Format != s.Format || key.Name != s.Name || key.Size != s.Size {
		return
	}
	if err := atomicfile.Write(c.stampPath(s), cachedir.Seal(stampMagic, encodeStamp(stampEntry{Build: c.d.Build, Stamp: s, Key: key})), false); err != nil {
		c.d.TurnOff(err, goingWithout)
		return
	}
	c.mu.Lock()
	c.stamps++
	c.mu.Unlock()
}

package traces

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io/fs"
)

// A FileCache keeps what an importer read from one file across runs, keyed
// by the file's bytes: a second run over unchanged logs decodes none of
// them. Get returns a copy the caller may change; a miss, or an entry it
// cannot trust, is ok false. Put may drop what it is given. Both are
// called from several goroutines at once. Package traces/filecache keeps
// one in a directory.
type FileCache interface {
	Get(key FileKey) (ss []*Session, w *Warnings, ok bool)
	Put(key FileKey, ss []*Session, w *Warnings)
}

// A FileKey names one file's import: the importer, the name messages give
// the file (warnings and some session ids carry it), and the file's
// contents by their xxhash and length.
type FileKey struct {
	Format string
	Name   string
	Sum    uint64
	Size   int64
}

// A FileStamp is what the file system says of a file without reading it:
// its size, modification time, device, inode and change time, with the
// importer and name of its FileKey. An append (Claude Code's logs only
// grow) changes the size and times; a file replaced by another is a new
// inode.
type FileStamp struct {
	Format     string
	Name       string
	Size       int64
	ModTime    int64 // Unix nanoseconds
	ChangeTime int64 // Unix nanoseconds
	Dev, Ino   uint64
}

// StampOf is the stamp of a file an importer opened (fs.File.Stat), and
// false where the file system gives no device and inode (an in-memory
// fs.FS, or a platform without them), which must never be served by stamp.
func StampOf(fi fs.FileInfo, format, name string) (FileStamp, bool) {
	dev, ino, ctime, ok := fileID(fi)
	if !ok || !fi.Mode().IsRegular() {
		return FileStamp{}, false
	}
	return FileStamp{Format: format, Name: name, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), ChangeTime: ctime, Dev: dev, Ino: ino}, true
}

// A StampedCache is a FileCache that also remembers which contents (FileKey)
// a file had at a stamp, so that a file unchanged since is served without
// being read or hashed, as git's index serves unchanged files. Lookup must
// not answer for a stamp it cannot trust: one remembered so soon after the
// file's last change that a later change in the same clock tick could
// leave the stamp as it was. The importer stamps a file before it reads
// it, so a stamp never names contents older than the file had at it.
type StampedCache interface {
	FileCache
	Lookup(s FileStamp) (FileKey, bool)
	Remember(s FileStamp, key FileKey)
}

// warningsWire is Warnings' gob form.
type warningsWire struct {
	Order  []string
	Counts []int
	First  []string
	Failed int
}

// GobEncode implements gob.GobEncoder: a FileCache stores an import's
// warnings as the importer made them, order and first places included.
func (w *Warnings) GobEncode() ([]byte, error) {
	ww := warningsWire{Order: w.order, Failed: w.failed}
	for _, r := range w.order {
		ww.Counts = append(ww.Counts, w.counts[r])
		ww.First = append(ww.First, w.first[r])
	}
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(ww)
	return b.Bytes(), err
}

// GobDecode implements gob.GobDecoder.
func (w *Warnings) GobDecode(b []byte) error {
	var ww warningsWire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ww); err != nil {
		return err
	}
	if len(ww.Counts) != len(ww.Order) || len(ww.First) != len(ww.Order) {
		return errBadWarnings
	}
	*w = Warnings{failed: ww.Failed}
	for i, r := range ww.Order {
		if ww.Counts[i] < 1 || w.counts[r] > 0 {
			return errBadWarnings
		}
		w.AddPlace(ww.First[i], r)
		w.counts[r] = ww.Counts[i]
	}
	return nil
}

var errBadWarnings = errors.New("traces: bad warnings in gob")

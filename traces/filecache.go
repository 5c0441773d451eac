package traces

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
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

// AppendBinary implements encoding.BinaryAppender: w as its importer made
// it, order and first places included, for a FileCache to keep (gob uses
// it through MarshalBinary too). The form: the failure count, the number
// of reasons, then each reason, its count and its first place, as
// uvarints and length-prefixed strings.
func (w *Warnings) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(w.failed))
	b = binary.AppendUvarint(b, uint64(len(w.order)))
	for _, r := range w.order {
		b = appendString(b, r)
		b = binary.AppendUvarint(b, uint64(w.counts[r]))
		b = appendString(b, w.first[r])
	}
	return b, nil
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (w *Warnings) MarshalBinary() ([]byte, error) { return w.AppendBinary(nil) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: the inverse of
// AppendBinary, all of b.
func (w *Warnings) UnmarshalBinary(b []byte) error {
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := next()
		if !ok || n > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	failed, ok1 := next()
	n, ok2 := next()
	if !ok1 || !ok2 || n > uint64(len(b)) || failed > math.MaxInt32 {
		return errBadWarnings
	}
	*w = Warnings{failed: int(failed)}
	for range n {
		r, ok1 := str()
		c, ok2 := next()
		first, ok3 := str()
		if !ok1 || !ok2 || !ok3 || c < 1 || c > math.MaxInt32 || w.counts[r] > 0 {
			return errBadWarnings
		}
		w.AddPlace(first, r)
		w.counts[r] = int(c)
	}
	if len(b) > 0 {
		return errBadWarnings
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errBadWarnings = errors.New("traces: bad warnings in binary form")

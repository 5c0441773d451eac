// Package cachedir is what the import cache (traces/filecache) and the
// hindsight cache (sim/hindsight/hindcache) share: the one cache-directory
// type, Dir (its Options, its warnings, off after a failed write, hits
// dated, trimmed after a run that wrote), an entry's envelope
// (Seal, Unseal: a magic and a checksum, so a spoiled file is a miss with
// a warning, never a wrong answer), and Trim, which keeps a directory of
// entries within a size after a run that wrote. Entries are files written
// whole (internal/atomicfile) whose modification time is their last use,
// so the least recently used go first.
package cachedir

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

const sumSize = 8

// Seal is magic, body, and the xxhash of both.
func Seal(magic string, body []byte) []byte {
	b := append([]byte(magic), body...)
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// Unseal checks what Seal made with magic and returns its body; what
// names the entry for the error of a file that is not one ("not " + what).
func Unseal(b []byte, magic, what string) ([]byte, error) {
	if len(b) < len(magic)+sumSize || string(b[:len(magic)]) != magic {
		return nil, errors.New("not " + what)
	}
	body, sum := b[:len(b)-sumSize], binary.LittleEndian.Uint64(b[len(b)-sumSize:])
	if xxhash.Sum64(body) != sum {
		return nil, errors.New("bad checksum")
	}
	return body[len(magic):], nil
}

// Trim removes from dir the entries (the regular files entry accepts) used
// least recently (oldest modification time, then name) until their total
// size is at most maxBytes; every file drop accepts; and, given a clock,
// the temporary files (atomicfile's *.tmp) a killed writer left more than
// an hour ago. Another process may be writing a newer temporary file, or
// removing entries meanwhile: neither is an error.
func Trim(dir string, entry, drop func(name string) bool, maxBytes int64, now func() time.Time) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type file struct {
		name string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, d := range ents {
		name := d.Name()
		if !d.Type().IsRegular() {
			continue
		}
		if drop != nil && drop(name) {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		tmp := strings.HasSuffix(name, ".tmp")
		if !tmp && !entry(name) {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue // removed meanwhile by another process
		}
		if tmp {
			if now != nil && fi.ModTime().Before(now().Add(-time.Hour)) {
				_ = os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		files = append(files, file{name, fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	slices.SortFunc(files, func(a, b file) int {
		if c := a.mod.Compare(b.mod); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, f := range files {
		if total <= maxBytes {
			break
		}
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		total -= f.size
	}
	return nil
}

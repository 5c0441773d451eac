// Package cachedir keeps a directory of cache entries within a size: the
// import cache (traces/filecache) and the hindsight cache
// (sim/hindsight/hindcache) trim theirs with it after a run that wrote.
// Entries are files written whole (internal/atomicfile) whose modification
// time is their last use, so the least recently used go first.
package cachedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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

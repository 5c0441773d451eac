// Package filebuf reads whole files into pooled buffers: the Claude Code
// importer reads a file at a time, decodes it and keeps only copies, and a fresh
// buffer per file was a large share of a run's page faults. (The import
// cache reads each entry into a buffer of its own instead: the entry's
// strings are that buffer's bytes.)
package filebuf

import (
	"io"
	"io/fs"
	"sync"
)

var pool = sync.Pool{New: func() any { return new([]byte) }}

// Read reads all of r into a pooled buffer, grown to the file's size once
// when r can say it (an fs.File), rather than by doubling, which clears
// and copies every step. Call release when done with b; b must not be
// used after.
func Read(r io.Reader) (b []byte, release func(), err error) {
	buf := pool.Get().(*[]byte)
	release = func() { pool.Put(buf) }
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && int64(cap(*buf)) < fi.Size()+1 {
			*buf = make([]byte, 0, fi.Size()+512)
		}
	}
	b = (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return b, release, nil
		}
		if err != nil {
			*buf = b
			release()
			return nil, func() {}, err
		}
	}
}

//go:build linux || darwin

package claudecode

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/filecache"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// readCounter is an fs.FS that counts the bytes read from each file.
type readCounter struct {
	fs.FS
	mu    sync.Mutex
	bytes map[string]int
}

type countedFile struct {
	fs.File
	name string
	c    *readCounter
}

func (c *readCounter) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countedFile{f, name, c}, nil
}

func (f *countedFile) Read(b []byte) (int, error) {
	n, err := f.File.Read(b)
	f.c.mu.Lock()
	f.c.bytes[f.name] += n
	f.c.mu.Unlock()
	return n, err
}

func (f *countedFile) ReadDir(n int) ([]fs.DirEntry, error) {
	return f.File.(fs.ReadDirFile).ReadDir(n)
}

// TestStampedImport: with a cache that keeps stamps, a second import of
// unchanged files reads none of them (same sessions and warnings); a file
// that grew is read, and only it.
func TestStampedImport(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(testdata)))
	want, ww, err := ImportFS(context.Background(), os.DirFS(dir), ".", dir)
	require.NoError(t, err)
	files, err := listFiles(os.DirFS(dir), ".", &traces.Warnings{}, dir)
	require.NoError(t, err)
	n := len(files)
	cacheDir := t.TempDir()
	c, err := filecache.Open(cacheDir, filecache.Options{Build: "test"})
	require.NoError(t, err)
	o := Options{Cache: c}
	fsys := &readCounter{FS: os.DirFS(dir)}
	run := func(what string, wantStats filecache.Stats) map[string]int {
		t.Helper()
		fsys.bytes = map[string]int{}
		got, gw, err := o.ImportFS(context.Background(), fsys, ".", dir)
		require.NoError(t, err)
		require.Equal(t, wantStats, c.Stats(), what)
		require.Equal(t, ww.List(), gw.List(), what)
		require.Equal(t, len(want), len(got), what)
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Fatalf("%s: session %s differs from the uncached import", what, want[i].ID)
			}
		}
		read := map[string]int{}
		for f, b := range fsys.bytes {
			if b > 0 {
				read[f] = b
			}
		}
		return read
	}
	require.Len(t, run("cold", filecache.Stats{Puts: n, Stamps: n}), n, "every file read")
	tracetest.DateStamps(t, cacheDir) // the copies are new: a stamp written now is racy
	require.Empty(t, run("warm", filecache.Stats{Hits: n, StampHits: n, Puts: n, Stamps: n}), "no file read")

	// A blank line appended: the file is read again (its stamp changed),
	// and only it; what it imports is the same.
	grown := files[len(files)-1]
	f, err := os.OpenFile(filepath.Join(dir, grown), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	read := run("grown", filecache.Stats{Hits: 2*n - 1, StampHits: 2*n - 1, Puts: n + 1, Stamps: n + 1})
	require.Equal(t, []string{grown}, keys(read))
	require.Empty(t, c.Warnings())
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// changingFile is an open file whose stat changes on every call, as a log
// being rewritten while it is read: the size stays that of the bytes read,
// the modification time moves, so only the stamp taken after the read can
// tell.
type changingFile struct {
	io.Reader
	size  int64
	stats int
}

type statInfo struct {
	fs.FileInfo
	size int64
	mod  time.Time
}

func (s statInfo) Size() int64        { return s.size }
func (statInfo) Mode() fs.FileMode    { return 0o644 }
func (s statInfo) ModTime() time.Time { return s.mod }
func (statInfo) Sys() any             { return &syscall.Stat_t{Dev: 1, Ino: 2} }
func (f *changingFile) Close() error  { return nil }
func (f *changingFile) Stat() (fs.FileInfo, error) {
	f.stats++
	return statInfo{size: f.size, mod: time.Unix(1e9+int64(f.stats), 0)}, nil
}

// TestStampChangedDuringRead: a file whose stamp changes while it is read
// is imported and cached by its contents, but its stamp is not remembered
// (it would name contents the file did not have at it).
func TestStampChangedDuringRead(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "short.jsonl"))
	require.NoError(t, err)
	c, err := filecache.Open(t.TempDir(), filecache.Options{Build: "test"})
	require.NoError(t, err)
	f := &changingFile{Reader: bytes.NewReader(data), size: int64(len(data))}
	var w traces.Warnings
	ss, err := Options{Cache: c}.cachedRead(f, "short.jsonl", &w)
	require.NoError(t, err)
	require.NotEmpty(t, ss)
	require.GreaterOrEqual(t, f.stats, 2, "stamped before and after the read")
	require.Equal(t, filecache.Stats{Puts: 1}, c.Stats(), "cached by contents, no stamp")
}

package filecache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

func sample() ([]*traces.Session, *traces.Warnings) {
	w := &traces.Warnings{}
	w.Add("a.jsonl", 3, "skipped invalid JSON")
	w.Add("a.jsonl", 9, "skipped invalid JSON")
	w.Fail("a.jsonl:12", "skipped session that fails validation")
	u := traces.Usage{Input: 3, CacheRead: 100, Output: 5}
	s := &traces.Session{ID: "s1", Model: "claude-opus-4-6", Events: []traces.Event{
		{Time: time.Date(2026, 2, 10, 21, 0, 0, 0, time.UTC), Kind: traces.User, Blocks: []traces.Block{{Kind: traces.Text, Text: "hi"}}},
		{Time: time.Date(2026, 2, 10, 21, 0, 2, 0, time.UTC), Kind: traces.Assistant, Usage: &u, Meta: map[string]string{"k": "v"}},
	}}
	return []*traces.Session{s}, w
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, Options{Build: "b1"})
	require.NoError(t, err)
	key := traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: 42, Size: 7}
	_, _, ok := c.Get(key)
	require.False(t, ok, "an empty cache misses")
	ss, w := sample()
	c.Put(key, ss, w)
	got, gw, ok := c.Get(key)
	require.True(t, ok)
	require.Equal(t, ss, got)
	require.Equal(t, w.List(), gw.List())
	require.Equal(t, 1, gw.Failed(), "failures survive")
	require.Equal(t, Stats{Hits: 1, Puts: 1}, c.Stats())

	// Another build, another name, other bytes: all misses.
	c2, err := Open(dir, Options{Build: "b2"})
	require.NoError(t, err)
	_, _, ok = c2.Get(key)
	require.False(t, ok, "another build's entry")
	for _, k := range []traces.FileKey{{Format: "claude-code", Name: "b.jsonl", Sum: 42, Size: 7}, {Format: "claude-code", Name: "a.jsonl", Sum: 43, Size: 7}} {
		_, _, ok = c.Get(k)
		require.False(t, ok, "%+v", k)
	}
	require.Empty(t, c.Warnings())
	require.Empty(t, c2.Warnings())
}

// TestCorrupt: an entry that is cut short, altered or not an entry at all
// is a miss with a warning, and the next Put replaces it.
func TestCorrupt(t *testing.T) {
	key := traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: 1, Size: 1}
	for name, spoil := range map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"flipped":   func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"empty":     func([]byte) []byte { return nil },
		"foreign":   func([]byte) []byte { return []byte("not a cache entry at all") },
	} {
		dir := t.TempDir()
		c, err := Open(dir, Options{Build: "b"})
		require.NoError(t, err)
		ss, w := sample()
		c.Put(key, ss, w)
		p := c.path(key)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, spoil(b), 0o644))
		_, _, ok := c.Get(key)
		require.False(t, ok, name)
		require.Len(t, c.Warnings(), 1, name)
		require.Contains(t, c.Warnings()[0], "re-imported", name)
		c.Put(key, ss, w)
		_, _, ok = c.Get(key)
		require.True(t, ok, "%s: replaced by the next Put", name)
	}
}

// TestFlushBound: Flush keeps the directory within MaxBytes, removing the
// least recently used entries first (a hit dates its entry when Now is set).
func TestFlushBound(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ss, w := sample()
	c, err := Open(dir, Options{Build: "b", Now: clock})
	require.NoError(t, err)
	keys := make([]traces.FileKey, 4)
	for i := range keys {
		keys[i] = traces.FileKey{Format: "claude-code", Name: string(rune('a' + i)), Sum: uint64(100 + i), Size: 1}
		c.Put(keys[i], ss, w)
		require.NoError(t, os.Chtimes(c.path(keys[i]), now, now))
		now = now.Add(time.Minute)
	}
	size := func(k traces.FileKey) int64 {
		fi, err := os.Stat(c.path(k))
		require.NoError(t, err)
		return fi.Size()
	}
	_, _, ok := c.Get(keys[0]) // the oldest becomes the newest
	require.True(t, ok)
	c.d.MaxBytes = size(keys[0]) + size(keys[3])
	require.NoError(t, c.Flush())
	var left []string
	for i, k := range keys {
		if _, err := os.Stat(c.path(k)); err == nil {
			left = append(left, string(rune('a'+i)))
		}
	}
	require.Equal(t, []string{"a", "d"}, left, "the two used last stay")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary file left: %s", e.Name())
	}
}

func TestBuildID(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	id, err := BuildID(exe)
	require.NoError(t, err)
	require.Regexp(t, `^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)+$`, id, "a Go build ID: action and content hashes")
	_, err = BuildID(filepath.Join(t.TempDir(), "nothing"))
	require.Error(t, err)
	notGo := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(notGo, []byte("#!/bin/sh\n"), 0o755))
	_, err = BuildID(notGo)
	require.ErrorContains(t, err, "no Go build ID")
	_, err = Open(t.TempDir(), Options{})
	require.Error(t, err, "a cache without a build cannot tell stale entries")
}

func TestOpenExecutable(t *testing.T) {
	c, err := OpenExecutable(t.TempDir(), nil)
	require.NoError(t, err, "a test binary has a Go build ID")
	exe, _ := os.Executable()
	id, _ := BuildID(exe)
	require.Equal(t, id, c.d.Build)
}

// TestUnusableDir: a cache directory that cannot be read or written (here
// a regular file) is one warning, not one per file, and the run goes on
// without it.
func TestUnusableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	c, err := Open(f, Options{Build: "b"})
	require.NoError(t, err)
	ss, w := sample()
	for i := range 5 {
		key := traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: uint64(i), Size: 1}
		_, _, ok := c.Get(key)
		require.False(t, ok)
		c.Put(key, ss, w)
	}
	require.Len(t, c.Warnings(), 1)
	require.Contains(t, c.Warnings()[0], "going without it for the rest of the run")
	require.Equal(t, Stats{}, c.Stats())
}

// TestStaleTemporary: Flush removes a temporary file a killed writer left
// over an hour ago, and keeps one that may still be being written; an
// earlier build's gob entry goes too.
func TestStaleTemporary(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c, err := Open(dir, Options{Build: "b", Now: func() time.Time { return now }})
	require.NoError(t, err)
	ss, w := sample()
	c.Put(traces.FileKey{Format: "claude-code", Name: "a", Sum: 1, Size: 1}, ss, w)
	stale, fresh := filepath.Join(dir, "x.entry.1.tmp"), filepath.Join(dir, "y.entry.2.tmp")
	legacy := filepath.Join(dir, "0123456789abcdef.gob")
	require.NoError(t, os.WriteFile(legacy, []byte("an earlier build's entry"), 0o644))
	for p, age := range map[string]time.Duration{stale: 2 * time.Hour, fresh: time.Minute} {
		require.NoError(t, os.WriteFile(p, []byte("half"), 0o644))
		require.NoError(t, os.Chtimes(p, now.Add(-age), now.Add(-age)))
	}
	require.NoError(t, c.Flush())
	require.NoFileExists(t, stale)
	require.FileExists(t, fresh)
	require.NoFileExists(t, legacy)
}

// stampOf stamps a real file as the importer does.
func stampOf(t *testing.T, p, name string) traces.FileStamp {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	s, ok := traces.StampOf(fi, "claude-code", name)
	if !ok {
		t.Skip("this platform gives no inode: no stamps")
	}
	return s
}

// TestStamp: a remembered stamp serves its key until the file changes, and
// never while it is racy (remembered within RacyWindow of the file's last
// change), nor to another build.
func TestStamp(t *testing.T) {
	dir, logs := t.TempDir(), t.TempDir()
	c, err := Open(dir, Options{Build: "b"})
	require.NoError(t, err)
	p := filepath.Join(logs, "a.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("0123456789"), 0o644))
	s := stampOf(t, p, "a.jsonl")
	key := traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: 7, Size: 10}
	// later dates the stamp file as if remembered well after the file's
	// last change (the test's files are all new).
	later := func() {
		t.Helper()
		at := time.Unix(0, max(s.ModTime, s.ChangeTime)).Add(RacyWindow + time.Second)
		require.NoError(t, os.Chtimes(c.stampPath(s), at, at))
	}

	_, ok := c.Lookup(s)
	require.False(t, ok, "nothing remembered")
	c.Remember(s, key)
	_, ok = c.Lookup(s)
	require.False(t, ok, "racy: remembered within the window of the file's change, which a change in the same tick could hide")
	later()
	got, ok := c.Lookup(s)
	require.True(t, ok)
	require.Equal(t, key, got)
	require.Equal(t, Stats{StampHits: 1, Stamps: 1}, c.Stats())

	// Any field of the stamp changed: a miss.
	for _, change := range []func(*traces.FileStamp){
		func(s *traces.FileStamp) { s.Size++ },
		func(s *traces.FileStamp) { s.ModTime++ },
		func(s *traces.FileStamp) { s.ChangeTime++ },
		func(s *traces.FileStamp) { s.Ino++ },
		func(s *traces.FileStamp) { s.Dev++ },
		func(s *traces.FileStamp) { s.Name = "b.jsonl" },
	} {
		s2 := s
		change(&s2)
		_, ok := c.Lookup(s2)
		require.False(t, ok, "%+v", s2)
	}
	c2, err := Open(dir, Options{Build: "other"})
	require.NoError(t, err)
	_, ok = c2.Lookup(s)
	require.False(t, ok, "another build's stamp")

	// A key that is not the stamp's file is not remembered.
	c.Remember(s, traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: 8, Size: 11})
	got, _ = c.Lookup(s)
	require.Equal(t, key, got)

	// A spoiled stamp is a miss with a warning.
	require.NoError(t, os.WriteFile(c.stampPath(s), []byte("ctxsimst garbage"), 0o644))
	later()
	_, ok = c.Lookup(s)
	require.False(t, ok)
	require.Len(t, c.Warnings(), 1)
	require.Contains(t, c.Warnings()[0], "bad checksum (ignored, the file is read)")
}

// TestStampOfMemFS: a file with no inode (an in-memory fs.FS) has no stamp.
func TestStampOfMemFS(t *testing.T) {
	fi, err := fs.Stat(fstest.MapFS{"a": {Data: []byte("x")}}, "a")
	require.NoError(t, err)
	_, ok := traces.StampOf(fi, "claude-code", "a")
	require.False(t, ok)
}

// fill sets every field reachable from v to a value that is not zero and
// differs from field to field, by reflection: a field added to a traces
// type is filled too, and a codec that forgets it fails TestCodecEveryField.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n) * 1000003)
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		v.SetUint(uint64(*n) * 1000003)
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 2, 10, 21, 0, *n, *n, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	default:
		panic("fill: add " + v.Kind().String())
	}
}

// TestCodecEveryField: a session with every field set (by reflection)
// comes back equal, as do nil and empty slices and maps, each as it was,
// and times at other offsets (unnamed, as time.Parse makes them from an
// RFC 3339 offset: time's binary form, which gob used too, keeps the
// offset, not a zone's name).
func TestCodecEveryField(t *testing.T) {
	var s traces.Session
	n := 0
	fill(reflect.ValueOf(&s).Elem(), &n)
	empty := traces.Session{ID: "e", Children: []string{}, Floor: []traces.Block{}, Events: []traces.Event{
		{Blocks: []traces.Block{}, Meta: map[string]string{}, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 5*3600+30*60))},
		{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 17))},
	}}
	w := &traces.Warnings{}
	w.Add("a.jsonl", 3, "r1")
	w.Fail("a.jsonl:5", "r2")
	w.Add("a.jsonl", 9, "r1")
	in := entry{Build: "b", Key: traces.FileKey{Format: "f", Name: "n", Sum: 1 << 63, Size: 1 << 40}, Sessions: []*traces.Session{&s, &empty, {ID: "nil"}}, Warnings: w}
	var e encoder
	require.NoError(t, e.entry(&in))
	out, err := decodeEntry(e.b)
	require.NoError(t, err)
	require.Equal(t, in.Build, out.Build)
	require.Equal(t, in.Key, out.Key)
	require.Equal(t, w.List(), out.Warnings.List())
	require.Equal(t, w.Failed(), out.Warnings.Failed())
	require.Len(t, out.Sessions, 3)
	for i := range in.Sessions {
		if !reflect.DeepEqual(in.Sessions[i], out.Sessions[i]) {
			t.Errorf("session %d:\n in %+v\nout %+v", i, in.Sessions[i], out.Sessions[i])
		}
	}
	require.NotNil(t, out.Sessions[1].Events[0].Meta, "empty stays empty")
	require.Nil(t, out.Sessions[2].Events, "nil stays nil")

	// Every cut is an error, never a panic or a partial entry.
	for i := range len(e.b) {
		_, err := decodeEntry(e.b[:i])
		require.Error(t, err, "cut at %d", i)
	}
	_, err = decodeEntry(append(slices.Clone(e.b), 0))
	require.ErrorContains(t, err, "trailing bytes")
}

// FuzzDecodeEntry: any bytes decode to an entry or an error, without a
// panic or an allocation larger than the input allows, and what decodes
// encodes back to bytes that decode to the same entry (and stamp).
func FuzzDecodeEntry(f *testing.F) {
	ss, w := sample()
	var e encoder
	require.NoError(f, e.entry(&entry{Build: "b", Key: traces.FileKey{Format: "f"}, Sessions: ss, Warnings: w}))
	f.Add(e.b)
	f.Add(encodeStamp(stampEntry{Build: "b"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if x, err := decodeEntry(b); err == nil {
			var e2 encoder
			// time's binary form reads some offsets its writer refuses
			// (-60 s): such an entry is not one the encoder could make.
			if err := e2.entry(x); err == nil {
				y, err := decodeEntry(e2.b) // e2.b is not written again

				if err != nil {
					t.Fatalf("re-encoded entry does not decode: %v", err)
				}
				if !sameTimes(x.Sessions, y.Sessions) || !reflect.DeepEqual(x.Sessions, y.Sessions) || x.Build != y.Build || x.Key != y.Key ||
					!reflect.DeepEqual(x.Warnings.List(), y.Warnings.List()) || x.Warnings.Failed() != y.Warnings.Failed() {
					t.Fatalf("entry changed in a round trip:\n%+v\n%+v", x, y)
				}
			}
		}
		if x, err := decodeStamp(b); err == nil {
			if y, err := decodeStamp(encodeStamp(x)); err != nil || y != x {
				t.Fatalf("stamp changed in a round trip: %+v, %+v, %v", x, y, err)
			}
		}
	})
}

// sameTimes reports whether a's and b's events (same shapes) are at the
// same instants with the same offsets, and then clears those times: time's
// binary form gives back an offset as the Local zone or as a fixed zone
// depending on the Local zone's rules at that instant, so the round trip
// keeps the offset, not the *time.Location (gob's did the same).
func sameTimes(a, b []*traces.Session) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].Events) != len(b[i].Events) {
			return false
		}
		for j := range a[i].Events {
			ta, tb := &a[i].Events[j].Time, &b[i].Events[j].Time
			_, oa := ta.Zone()
			_, ob := tb.Zone()
			if !ta.Equal(*tb) || oa != ob {
				return false
			}
			*ta, *tb = time.Time{}, time.Time{}
		}
	}
	return true
}

// TestPlantedFIFO: a FIFO planted as an entry or a stamp made every
// command reading logs wait in open(2) for a writer forever; the cache is
// off for the run, warned, and the logs read as without it.
func TestPlantedFIFO(t *testing.T) {
	key := traces.FileKey{Format: "claude-code", Name: "a.jsonl", Sum: 1, Size: 1}
	stamp := traces.FileStamp{Format: "claude-code", Name: "a.jsonl", Size: 1, ModTime: 1, Dev: 1, Ino: 1}
	for name, path := range map[string]func(c *Cache) string{
		"entry": func(c *Cache) string { return c.path(key) },
		"stamp": func(c *Cache) string { return c.stampPath(stamp) },
	} {
		c, err := Open(t.TempDir(), Options{Build: "b"})
		require.NoError(t, err)
		if err := syscall.Mkfifo(path(c), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		got := make(chan bool, 1)
		go func() {
			_, _, hit := c.Get(key)
			_, found := c.Lookup(stamp)
			got <- hit || found
		}()
		select {
		case hit := <-got:
			if w := c.Warnings(); hit || len(w) != 1 || !strings.Contains(w[0], "is a FIFO") {
				t.Errorf("%s: hit %v, warnings %q", name, hit, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still waiting after 5 s", name)
		}
	}
}

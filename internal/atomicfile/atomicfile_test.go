package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteSetAtomic pins "output sets are atomic file by file but not as
// a set": a failed report.html left new records beside an old report.
func TestWriteSetAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteSet(dir, []SetFile{{Name: "records.jsonl", Write: write("old records")}, {Name: "report.html", Write: write("old report")}}); err != nil {
		t.Fatal(err)
	}
	err := WriteSet(dir, []SetFile{
		{Name: "records.jsonl", Write: write("new records")},
		{Name: "report.html", Write: func(io.Writer) error { return errors.New("cannot render") }},
	})
	if err == nil {
		t.Fatal("a failed file did not fail the set")
	}
	for name, want := range map[string]string{"records.jsonl": "old records", "report.html": "old report"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q: the old set untouched", name, b, err, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.tmp*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	if err := WriteSet(dir, []SetFile{{Name: "records.jsonl", Write: write("new records")}, {Name: "report.html", Write: write("new report")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report.html")); string(b) != "new report" {
		t.Errorf("report.html = %q after a good write", b)
	}
}

// TestOutputOntoNonRegular pins issue 27's first class: an output path
// naming a FIFO or a device became a regular file (a temporary file was
// renamed over it; `check --markdown /dev/null` as root replaced
// /dev/null). A FIFO or character device is written in place and stays
// what it was; a socket, block device or directory is refused and left
// alone; a cache entry that is not a regular file is refused.
func TestOutputOntoNonRegular(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	isFIFO := func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && fi.Mode()&fs.ModeNamedPipe != 0
	}
	// A FIFO with a reader: it gets the bytes, and stays a FIFO.
	fifo := filepath.Join(dir, "summary.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// read is what a reader of p gets, "" when nothing came (the FIFO
	// was replaced: the reader still waits on the old node).
	read := func(p string) func() string {
		got := make(chan string, 1)
		go func() {
			b, err := os.ReadFile(p)
			if err != nil {
				b = []byte("error: " + err.Error())
			}
			got <- string(b)
		}()
		return func() string {
			select {
			case s := <-got:
				return s
			case <-time.After(5 * time.Second):
				return ""
			}
		}
	}
	got := read(fifo)
	if err := WriteFunc(fifo, write("# summary\n")); err != nil {
		t.Fatal(err)
	}
	if s := got(); s != "# summary\n" || !isFIFO(fifo) {
		t.Errorf("FIFO: reader got %q, still a FIFO: %v", s, isFIFO(fifo))
	}
	// Through a symlink, and as a file of a set.
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	got = read(fifo)
	if err := WriteFunc(link, write("via link")); err != nil || got() != "via link" || !isFIFO(fifo) {
		t.Errorf("FIFO through a symlink: err %v, still a FIFO: %v", err, isFIFO(fifo))
	}
	got = read(fifo)
	if err := WriteSet(dir, []SetFile{{Name: "records.jsonl", Write: write("r")}, {Name: "summary.md", Write: write("in a set")}}); err != nil || got() != "in a set" || !isFIFO(fifo) {
		t.Errorf("FIFO in a set: err %v, still a FIFO: %v", err, isFIFO(fifo))
	}
	// A cache entry is never written into a FIFO (nobody reads it).
	if err := Write(fifo, []byte("entry"), false); err == nil || !isFIFO(fifo) {
		t.Errorf("cache entry onto a FIFO: err %v, still a FIFO: %v", err, isFIFO(fifo))
	}

	// A socket and a directory are refused, and stay.
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, kind := range map[string]string{sock: "a socket", sub: "a directory"} {
		before, _ := os.Lstat(p)
		err := WriteFunc(p, write("x"))
		after, _ := os.Lstat(p)
		if err == nil || !strings.Contains(err.Error(), "is "+kind+": not written") || after.Mode() != before.Mode() {
			t.Errorf("%s: err %v, mode %v -> %v", kind, err, before.Mode(), after.Mode())
		}
	}

	// Device nodes (root only): a character device like /dev/null is
	// written in place, a block device refused; neither replaced.
	null, block := filepath.Join(dir, "null"), filepath.Join(dir, "block")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod (needs root): %v; device nodes not tried", err)
		return
	}
	if err := syscall.Mknod(block, syscall.S_IFBLK|0o600, 7<<8|250); err != nil {
		t.Fatal(err)
	}
	if err := WriteFunc(null, write("discarded")); err != nil {
		t.Errorf("character device: %v", err)
	}
	if err := WriteFunc(block, write("x")); err == nil || !strings.Contains(err.Error(), "a block device") {
		t.Errorf("block device: %v", err)
	}
	for p, want := range map[string]fs.FileMode{null: fs.ModeDevice | fs.ModeCharDevice, block: fs.ModeDevice} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != want {
			t.Errorf("%s is now %v (%v), want %v", filepath.Base(p), fi.Mode().Type(), err, want)
		}
	}
}

// TestWriteDevNull: os.DevNull named as an output (check --markdown
// /dev/null) is written in place and stays the character device it is.
// The old writer renamed a temporary file over it (as root; otherwise
// creating the temporary file in its directory failed).
func TestWriteDevNull(t *testing.T) {
	before, err := os.Lstat(os.DevNull)
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here (%v)", os.DevNull, err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "discarded\n"); return err }
	if err := WriteFunc(os.DevNull, write); err != nil {
		t.Errorf("WriteFunc(%s): %v", os.DevNull, err)
	}
	after, err := os.Lstat(os.DevNull)
	if err != nil || after.Mode() != before.Mode() {
		t.Fatalf("%s is now %v (%v), was %v", os.DevNull, after.Mode(), err, before.Mode())
	}
}

// TestOpenRefusesNonRegular: a file ctxsim wrote and reads back (a
// sweep's journal, a shard's files) is a regular file; a FIFO planted
// under its name is refused at once (opening it to read waited for a
// writer forever, SIGTERM or not: sweep --resume hung), and so are a
// character device (/dev/zero never ends; /dev/null here) and a directory.
func TestOpenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cells.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for p, kind := range map[string]string{fifo: "a FIFO", link: "a character device", dir: "a directory"} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is "+kind+", not a regular file: not read") {
				t.Errorf("%s: %v", filepath.Base(p), err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: still opening after 5 s", filepath.Base(p))
		}
	}
	reg := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(reg, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(reg); err != nil || string(b) != "{}\n" {
		t.Errorf("regular file: %q, %v", b, err)
	}
	if _, err := Open(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

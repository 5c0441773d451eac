package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write writes b to path atomically, making path's directory if need be.
// durable syncs the file before the rename, so that a crash cannot leave
// an empty file under the name; a cache whose entries carry a checksum can
// go without. Anything at path but a regular file or a symlink (a FIFO or
// device planted among the entries) is refused, never renamed over.
func Write(path string, b []byte, durable bool) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("write %s: %w", path, &NotRegularError{Mode: fi.Mode()})
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// A NotRegularError is an output path naming something a write must not
// replace and cannot write into: a directory, a socket, a block device;
// or (Read) a file of an output set that is not a regular file.
type NotRegularError struct {
	Mode fs.FileMode
	Read bool
}

func (e *NotRegularError) Error() string {
	kind := "not a regular file"
	switch m := e.Mode; {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		kind = "a block device"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	}
	if e.Read {
		return "is " + kind + ", not a regular file: not read"
	}
	return "is " + kind + ": not written"
}

// A target is where a write to a path lands.
type target struct {
	path string
	mode fs.FileMode // permission bits of the file replaced, 0644 for a new one
	// inPlace: a character device or FIFO (/dev/null, /dev/stdout, a
	// shell's >(...)), which is opened and written; renaming a file over
	// it would replace the device node with a regular file.
	inPlace bool
}

// resolve follows path's symlinks (a link is written through: its target
// is replaced and the link stays) and says how to write what is there.
func resolve(path string) (target, error) {
	t := target{path: path, mode: 0o644}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		t.path = p
	}
	fi, err := os.Stat(t.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	case err != nil:
		return t, err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		t.mode = m.Perm()
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		t.inPlace = true
	default:
		return t, &NotRegularError{Mode: m}
	}
	return t, nil
}

// WriteFunc writes what write produces to path, a command's output file:
// a regular file (or a new path) is written through a temporary file in
// the same directory, synced and renamed into place, so a reader never sees
// half of it and a failed write leaves the old file alone. A symlink is
// written through, and a replaced file keeps its permission bits. A
// character device or FIFO is opened and written in place (never
// replaced); a directory, socket or block device is refused.
func WriteFunc(path string, write func(io.Writer) error) error {
	t, err := resolve(path)
	if err == nil {
		if t.inPlace {
			err = writeInPlace(t.path, write)
		} else {
			err = writeRenamed(t, write)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", t.path, err)
	}
	return nil
}

func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeRenamed(t target, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(t.path), "."+filepath.Base(t.path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, t.mode)
	}
	if err == nil {
		err = os.Rename(tmp, t.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// A SetFile is one file of an output set: its name in the directory and
// what to write to it.
type SetFile struct {
	Name  string
	Write func(io.Writer) error
}

// WriteSet writes files into dir as a set: all of them are written into a
// temporary directory beside dir first, and only when every one is written
// are they moved into dir (the temporary directory is renamed to dir when
// dir did not exist). A failed write leaves dir as it was: never new
// records beside an old report. Each file lands as WriteFunc lands it: a
// symlink written through, a FIFO or character device written in place,
// a directory, socket or block device refused (checked before anything is
// moved).
func WriteSet(dir string, files []SetFile) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone once renamed; else the partial set
	for _, f := range files {
		if err := writeRenamed(target{path: filepath.Join(tmp, f.Name), mode: 0o644}, f.Write); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(dir, f.Name), err)
		}
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return err
		}
		return os.Rename(tmp, dir)
	}
	dsts := make([]target, len(files))
	for i, f := range files {
		t, err := resolve(filepath.Join(dir, f.Name))
		if err != nil {
			return fmt.Errorf("write %s: %w", t.path, err)
		}
		dsts[i] = t
	}
	for i, f := range files {
		src, t := filepath.Join(tmp, f.Name), dsts[i]
		if t.inPlace {
			err = writeInPlace(t.path, func(w io.Writer) error { return copyFile(w, src) })
		} else if err = os.Chmod(src, t.mode); err == nil {
			err = os.Rename(src, t.path)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", t.path, err)
		}
	}
	return nil
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Open opens a file of an output set ctxsim wrote (a sweep's journal, a
// shard's manifest and cells) to read it back. Only a regular file is such
// a file: anything else planted under its name is refused with a
// NotRegularError, never read (opening a FIFO for reading waits for a
// writer, a signal or not, and /dev/zero never ends). The open itself does
// not wait (O_NONBLOCK), and the check is of the file opened.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "read", Path: path, Err: &NotRegularError{Mode: fi.Mode(), Read: true}}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile is os.ReadFile through Open.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

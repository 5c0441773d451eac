package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes b to path atomically, making path's directory if need be.
// durable syncs the file before the rename, so that a crash cannot leave
// an empty file under the name; a cache whose entries carry a checksum can
// go without.
func Write(path string, b []byte, durable bool) error {
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

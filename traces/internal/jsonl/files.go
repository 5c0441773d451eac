package jsonl

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Files is path itself when it is a file, else the files under it whose
// name keep accepts, sorted: how every importer finds its logs.
func Files(path string, keep func(name string) bool) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && keep(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

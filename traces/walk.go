package traces

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Warning reasons of WalkFiles.
const (
	WarnSpecialFile = "skipped file that is not a regular file (device, FIFO or socket)"
	WarnSymlinkOut  = "skipped symlink to a file outside the tree named"
	WarnSymlinkDir  = "skipped symlink to a directory (not followed)"
	WarnBadSymlink  = "skipped broken symlink"
)

// WalkFiles lists the files a reader may open under path. A path that is
// not a directory is itself (followed if it is a symlink: the user named
// it) and must be a regular file. A directory yields its regular files
// whose name keep accepts, sorted; everything else a tree can hold is
// skipped with a warning rather than opened, since opening a FIFO blocks
// forever and a device such as /dev/zero never ends: devices, FIFOs and
// sockets, symlinks to directories (never followed, so no cycles), and
// symlinks to files outside the tree. A symlink to a file inside the tree
// is listed by its own name.
func WalkFiles(path string, keep func(name string) bool, w *Warnings) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
		}
		return []string{path}, nil
	}
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !keep(d.Name()) {
			if d.Type()&fs.ModeSymlink != 0 && keep(d.Name()) {
				w.Add(p, 0, WarnSymlinkDir)
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsRegular():
			files = append(files, p)
		case t&fs.ModeSymlink != 0:
			if reason := symlinkProblem(p, root); reason != "" {
				w.Add(p, 0, reason)
				return nil
			}
			files = append(files, p)
		default:
			w.Add(p, 0, WarnSpecialFile)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// symlinkProblem is why the symlink p may not be read, "" if it leads to a
// regular file under root.
func symlinkProblem(p, root string) string {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return WarnBadSymlink
	}
	st, err := os.Stat(target)
	switch {
	case err != nil:
		return WarnBadSymlink
	case st.IsDir():
		return WarnSymlinkDir
	case !st.Mode().IsRegular():
		return WarnSpecialFile
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return WarnBadSymlink
	}
	if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return WarnSymlinkOut
	}
	return ""
}

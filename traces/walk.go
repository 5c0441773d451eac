package traces

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// Warning reasons of WalkFiles.
const (
	WarnSpecialFile = "skipped file that is not a regular file (device, FIFO or socket)"
	WarnSymlinkOut  = "skipped symlink to a file outside the tree named"
	WarnSymlinkDir  = "skipped symlink to a directory (not followed)"
	WarnBadSymlink  = "skipped broken symlink"
)

// WalkFiles is Input.Files for the file or directory p on disk, as paths
// on disk.
func WalkFiles(p string, keep func(name string) bool, w *Warnings) ([]string, error) {
	in, err := DirInput(p)
	if err != nil {
		return nil, err
	}
	files, err := in.Files(context.Background(), keep, w)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		files[i], _ = in.OSPath(f)
	}
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

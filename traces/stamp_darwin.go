package traces

import (
	"io/fs"
	"syscall"
)

// fileID is a file's device, inode and change time from its stat(2).
func fileID(fi fs.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), st.Ino, st.Ctimespec.Nano(), true
}

//go:build unix

package history

import (
	"os"
	"syscall"
)

// fileOwner returns the inode and owner of a file (the index's identity of
// a file, and the check that it is the user's own).
func fileOwner(fi os.FileInfo) (ino uint64, uid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), int(st.Uid)
	}
	return 0, -1
}

// openNoFollow opens path for reading, failing if it is a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

//go:build unix

package search

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// fileID returns a file's inode and owner (-1: unknown).
func fileID(fi fs.FileInfo) (ino uint64, uid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), int(st.Uid)
	}
	return 0, -1
}

// openNoFollow opens a regular file for reading, never through a symlink
// and never blocking on a FIFO put in its place.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.Join(errors.New("not a regular file"), err)
	}
	return f, nil
}

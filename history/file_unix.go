//go:build unix

package history

import (
	"fmt"
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

// openNoFollow opens path for reading, failing if it is a symbolic link
// or not a regular file. It opens with O_NONBLOCK, so that a FIFO (or a
// device) put where a session file is expected cannot block the open
// forever, and refuses what fstat says is not a regular file before
// anything is read (O_NONBLOCK changes nothing for reading a regular
// file).
func openNoFollow(path string) (*os.File, error) { return openRegular(path, os.O_RDONLY) }

// openAppendNoFollow opens path for appending (and for reading its last
// byte), failing if it is a symbolic link or not a regular file, as
// openNoFollow does.
func openAppendNoFollow(path string) (*os.File, error) {
	return openRegular(path, os.O_RDWR|os.O_APPEND)
}

// openRegular opens path with flag, never through a symbolic link nor
// blocking on a FIFO, and keeps it only if fstat says it is a regular
// file.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotAllowed, path, fi.Mode().Type())
	}
	return f, nil
}

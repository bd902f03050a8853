//go:build !unix

package history

import (
	"fmt"
	"os"
)

// fileOwner has no inode or owner to report here: files are told apart by
// size, mtime and the checksum of their head, and ownership is left to the
// file system's access control.
func fileOwner(os.FileInfo) (ino uint64, uid int) { return 0, -1 }

// openNoFollow opens path for reading, refusing a symbolic link or what is
// not a regular file (checked with Lstat just before: there is no
// O_NOFOLLOW here).
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotAllowed, path, fi.Mode().Type())
	}
	return os.Open(path)
}

// openAppendNoFollow opens path for appending (and for reading its last
// byte), refusing a symbolic link or what is not a regular file (checked
// with Lstat just before).
func openAppendNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s is a symbolic link", ErrNotAllowed, path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotAllowed, path, fi.Mode().Type())
	}
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
}

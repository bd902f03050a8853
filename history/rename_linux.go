package history

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, failing (fs.ErrExist) when to
// exists: the kernel checks, so nothing that appeared since a check is
// overwritten.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS { // a file system without it
		return renameChecked(from, to)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

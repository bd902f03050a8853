//go:build unix

package privdir

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate checks that dir is a directory (not a symlink) owned by
// this user with no permission for group or others.
func checkPrivate(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("privdir: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Getuid() || info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("privdir: %s must be a directory of user %d with mode 0700 (it is %v): remove it, or set TMPDIR elsewhere", dir, os.Getuid(), info.Mode())
	}
	return nil
}

//go:build unix

package mcpconfig

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive lock on f, waiting for it (flock(2)). The
// lock is released when f is closed, also when the process dies.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

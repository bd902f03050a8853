//go:build unix

package privdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock on f (flock(2)): with wait it waits for
// it, without it fails at once when another process holds it. The lock is
// released when f is closed, also when the process dies. mcpconfig's settings
// writes and the run directories (NewRun, RemoveStale) both use it.
func Lock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

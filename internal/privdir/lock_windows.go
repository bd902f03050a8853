//go:build windows

package privdir

import (
	"os"

	"golang.org/x/sys/windows"
)

// Lock takes an exclusive lock on f (LockFileEx on the whole file):
// with wait it waits for it, without it fails at once when another process
// holds it. The lock is released when f is closed, also when the process
// dies.
func Lock(f *os.File, wait bool) error {
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, ^uint32(0), ^uint32(0), &ol)
}

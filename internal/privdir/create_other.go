//go:build !windows

package privdir

import "os"

// createLockFile creates the file at path (it must not exist), 0600, for
// Lock.
func createLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

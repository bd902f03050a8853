//go:build !unix

package mcpconfig

import (
	"fmt"
	"os"
)

// lockFile does nothing where there is no flock: every directory looks
// held, so RemoveStale removes nothing there.
func lockFile(_ *os.File, wait bool) error {
	if wait {
		return nil
	}
	return fmt.Errorf("no file locks on this platform")
}

// checkPrivate checks that dir is a directory, not a symlink.
func checkPrivate(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("mcpconfig: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("mcpconfig: %s must be a directory (it is %v): remove it, or set TMP elsewhere", dir, info.Mode())
	}
	return nil
}

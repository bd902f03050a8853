//go:build !unix

package privdir

import (
	"fmt"
	"os"
)

// checkPrivate checks that dir is a directory, not a symlink.
func checkPrivate(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("privdir: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("privdir: %s must be a directory (it is %v): remove it, or set TMP elsewhere", dir, info.Mode())
	}
	return nil
}

//go:build !unix && !windows

package privdir

import (
	"errors"
	"os"
)

// Lock does nothing where the platform has no file locks (js, wasip1,
// plan9): writes are then serialized within the process only (the caller's mutex),
// and without wait it reports the file held, so RemoveStale removes nothing.
func Lock(_ *os.File, wait bool) error {
	if wait {
		return nil
	}
	return errors.New("no file locks on this platform")
}

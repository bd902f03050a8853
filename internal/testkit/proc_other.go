//go:build !unix

package testkit

import (
	"fmt"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
)

// Where there is no /proc the processes cannot be listed: GroupMembers and
// MarkedProcesses return nil, so WaitGone returns nil at once. Only Linux
// runs the suite; these exist so that the tests compile everywhere.

// GroupMembers returns nil: the processes of a group cannot be listed here.
func GroupMembers(pgid int) []GroupProc { return nil }

// Children returns nil: processes cannot be listed here.
func Children(pid int) []GroupProc { return nil }

// MarkedProcesses returns nil: the environments of processes cannot be read
// here.
func MarkedProcesses(marker string) []GroupProc { return nil }

// WaitGone returns nil: see MarkedProcesses.
func WaitGone(marker string, timeout time.Duration) []GroupProc { return nil }

// KillGroup kills group pgid (childproc.SignalGroup with SIGKILL) and waits
// up to timeout until childproc.GroupAlive says it is gone. A group that is
// already gone is not an error.
func KillGroup(pgid int, timeout time.Duration) error {
	if pgid <= 1 {
		return fmt.Errorf("kill group: refusing process group %d", pgid)
	}
	if err := childproc.SignalGroup(pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill group: %w", err)
	}
	if !childproc.WaitGroupGone(pgid, timeout) {
		return fmt.Errorf("kill group %d: still running after %v", pgid, timeout)
	}
	return nil
}

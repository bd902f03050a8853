package testkit

import (
	"fmt"
	"time"
)

// GroupProc is a live process, as GroupMembers and MarkedProcesses list it.
type GroupProc struct {
	PID     int
	Command string // its command line, capped at 200 bytes
}

func (p GroupProc) String() string { return fmt.Sprintf("%d %s", p.PID, p.Command) }

// pollGone calls list every 10 ms until it returns nothing or timeout has
// passed, and returns its last answer.
func pollGone(list func() []GroupProc, timeout time.Duration) []GroupProc {
	deadline := time.Now().Add(timeout)
	for {
		left := list()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

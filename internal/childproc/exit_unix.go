//go:build unix

package childproc

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExitStatus says how a process ended: its exit code, or, when a signal
// killed it, the signal's name ("SIGKILL") and code -1. A nil state (the
// process was never waited for) is neither: code -1, signal "".
func ExitStatus(st *os.ProcessState) (code int, signal string) {
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return -1, name
	}
	return st.ExitCode(), ""
}

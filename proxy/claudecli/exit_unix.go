//go:build unix

package claudecli

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitStatus describes how a process ended: its exit code, or the name of
// the signal that killed it (the other is nil).
func exitStatus(st *os.ProcessState) (code *int64, signal *string) {
	if st == nil {
		s := "unknown"
		return nil, &s
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return nil, &name
	}
	c := int64(st.ExitCode())
	return &c, nil
}

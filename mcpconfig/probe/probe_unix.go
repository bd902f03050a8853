//go:build unix

package probe

import (
	"errors"
	"os"
	"syscall"
)

// isBrokenPipe reports whether err is a write to a pipe nobody reads.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// killedByStop reports whether st is the end of a process that proc.stop
// killed (SIGKILL), rather than its own exit.
func killedByStop(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// isConnRefused reports whether err is a refused TCP connection.
func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

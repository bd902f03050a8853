//go:build unix

package proxy

import (
	"syscall"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
)

// sigUSR1 ends a fake claude started with FAKE_EXIT_ON_USR1=1, with status
// 0 (stdin EOF does not).
var sigUSR1 = fakeclaude.ExitSignal

// killPID sends sig to the process pid.
func killPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

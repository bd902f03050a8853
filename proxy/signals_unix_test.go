//go:build unix

package proxy

import (
	"os"
	"syscall"
)

// sigUSR1 ends the fake claude with status 0 (stdin EOF does not).
var sigUSR1 os.Signal = syscall.SIGUSR1

// killPID sends sig to the process pid.
func killPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

//go:build unix

package proxy

import "syscall"

// killPID sends sig to the process pid.
func killPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

//go:build !unix && !windows

package childproc

import (
	"os/exec"
	"syscall"
)

// SetGroup does nothing where there are no process groups.
func SetGroup(*exec.Cmd) {}

// SignalGroup does nothing where there are no process groups.
func SignalGroup(int, syscall.Signal) error { return nil }

// GroupAlive reports false where there are no process groups.
func GroupAlive(int) bool { return false }

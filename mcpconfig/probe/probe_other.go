//go:build !unix

package probe

import (
	"os/exec"
	"syscall"
)

// Without process groups only the server process itself is signalled (by
// its *exec.Cmd); these are no-ops.

func setProcessGroup(*exec.Cmd) {}

func signalGroup(int, syscall.Signal) error { return nil }

func groupAlive(int) bool { return false }

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)

func isBrokenPipe(error) bool { return false }

func isConnRefused(err error) bool { return false }

//go:build !unix

package probe

import (
	"syscall"
)

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)

func isBrokenPipe(error) bool { return false }

func isConnRefused(err error) bool { return false }

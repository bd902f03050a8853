//go:build unix

package probe

import (
	"errors"
	"syscall"
)

// isBrokenPipe reports whether err is a write to a pipe nobody reads.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// isConnRefused reports whether err is a refused TCP connection.
func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

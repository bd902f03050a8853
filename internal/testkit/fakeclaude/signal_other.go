//go:build !unix

package fakeclaude

import (
	"syscall"
)

// ExitSignal ends a fake started with FAKE_EXIT_ON_USR1=1, with status 0.
// The fake runs on Unix only; this stand-in keeps it compiling elsewhere.
const ExitSignal = syscall.Signal(10)

//go:build unix

package fakeclaude

import (
	"os"
	"syscall"
)

// ExitSignal ends a fake started with FAKE_EXIT_ON_USR1=1, with status 0.
var ExitSignal os.Signal = syscall.SIGUSR1

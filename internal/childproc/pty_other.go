//go:build !linux

package childproc

import (
	"fmt"
	"os"
	"runtime"
)

const terminalSupported = false

// OpenTerminal is implemented on Linux only; elsewhere it returns
// ErrNoTerminal.
func OpenTerminal() (master, tty *os.File, err error) {
	return nil, nil, fmt.Errorf("%w on %s", ErrNoTerminal, runtime.GOOS)
}

package childproc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const terminalSupported = true

// OpenTerminal opens a pseudo-terminal pair. A child given tty as a
// standard stream sees a terminal there (isatty holds), which some commands
// insist on (`claude mcp login` refuses to run when its stdin is not one).
// tty is not made anyone's controlling terminal (O_NOCTTY). Close tty in
// the parent once the child has started, and master after the child has
// ended: while master is open the child's reads of tty just wait.
func OpenTerminal() (master, tty *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("childproc: open a pseudo-terminal: %w", err)
	}
	var n int
	rc, err := m.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err != nil {
				err = fmt.Errorf("unlock: %w", err)
				return
			}
			if n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); err != nil {
				err = fmt.Errorf("get its number: %w", err)
			}
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("childproc: pseudo-terminal: %w", err)
	}
	t, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("childproc: open the pseudo-terminal's tty: %w", err)
	}
	return m, t, nil
}

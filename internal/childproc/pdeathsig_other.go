//go:build unix && !linux

package childproc

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}

//go:build unix && !linux

package proxy

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}

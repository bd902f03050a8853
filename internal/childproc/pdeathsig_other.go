//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

func setParentDeathSignal(*syscall.SysProcAttr) {}

func guardCmd(*exec.Cmd) bool { return false }

func killGuardTree(int) {}

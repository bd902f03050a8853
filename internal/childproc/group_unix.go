//go:build unix

package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SetGroup makes cmd start in a process group of its own (its pid is the
// group id). On Linux cmd is started through the guard (see the package
// doc): cmd.Path and cmd.Args are rewritten, and whatever the command
// starts, even outside its group, ends when the command ends or ccproxy
// dies; cmd.Process.Pid is then the guard's. Call it after setting
// cmd.Path, cmd.Args, cmd.Dir and cmd.ExtraFiles and before cmd.Start;
// other SysProcAttr settings are kept (with the guard they apply to it, and
// the command inherits what a child inherits).
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if !guardCmd(cmd) {
		setParentDeathSignal(cmd.SysProcAttr)
	}
}

// SignalGroup sends sig to every process of group pgid. A group that is
// already gone is not an error. On Linux, SIGKILL to a group led by a guard
// also kills first what the command started outside its group.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("childproc: no process group %d", pgid)
	}
	if sig == syscall.SIGKILL {
		killGuardTree(pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("childproc: signal %v to group %d: %w", sig, pgid, err)
	}
	return nil
}

// GroupAlive reports whether process group pgid still has a live (not
// zombie) member. Orphaned zombies are not ours to reap, so where /proc
// exists they are not counted.
func GroupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			return true
		}
	}
	return false
}

//go:build unix

package probe

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// setProcessGroup makes cmd the leader of a new process group, so that the
// server and everything it spawns can be signalled at once.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalGroup sends sig to process group pgid; a group that is gone is not
// an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return nil
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether process group pgid still has a live (not
// zombie) member. Orphaned zombies are not ours to reap, so where /proc
// exists they are not counted.
func groupAlive(pgid int) bool {
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

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)

// isBrokenPipe reports whether err is a write to a pipe nobody reads.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// isConnRefused reports whether err is a refused TCP connection.
func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

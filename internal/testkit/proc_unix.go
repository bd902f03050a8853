//go:build unix

package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SetProcessGroup makes cmd start as the leader of a new process group, so
// that it and every process it spawns (MCP servers, shells) can be signalled
// together with KillGroup. Call it before cmd.Start.
func SetProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// GroupProc is a live process of a process group.
type GroupProc struct {
	PID     int
	Command string // its command line, capped at 200 bytes
}

func (p GroupProc) String() string { return fmt.Sprintf("%d %s", p.PID, p.Command) }

// GroupMembers lists the live (not zombie) processes of process group pgid,
// read from /proc. Where /proc is missing it returns nil.
func GroupMembers(pgid int) []GroupProc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []GroupProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err != nil || g != pgid {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		c := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		if len(c) > 200 {
			c = c[:200]
		}
		out = append(out, GroupProc{PID: pid, Command: c})
	}
	return out
}

// KillGroup sends SIGKILL to process group pgid and waits up to timeout
// until no live process of the group is left. A group that is already gone
// is not an error. The processes are not our children (their parent, the
// group leader, has exited), so there is nothing to wait on: it polls.
func KillGroup(pgid int, timeout time.Duration) error {
	if pgid <= 1 {
		return fmt.Errorf("kill group: refusing process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill group %d: %w", pgid, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		left := GroupMembers(pgid)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill group %d: still running after %v: %v", pgid, timeout, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SignalGroup sends sig to process group pgid; a gone group is not an error.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal group: refusing process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal group %d: %w", pgid, err)
	}
	return nil
}

//go:build unix

package testkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
)

// Children lists the live (not zombie) child processes of pid, read from
// /proc: on Linux, the command a childproc guard runs is its only child.
func Children(pid int) []GroupProc {
	return liveProcsPPID(func(_ int, _ string, _, ppid int) bool { return ppid == pid })
}

// GroupMembers lists the live (not zombie) processes of process group pgid,
// read from /proc. Where /proc is missing it returns nil.
func GroupMembers(pgid int) []GroupProc {
	return liveProcs(func(_ int, _ string, pgrp int) bool { return pgrp == pgid })
}

// MarkedProcesses lists the live (not zombie) processes, other than this
// one, whose environment holds the entry marker (NAME=value, matched
// whole). A test puts a unique marker in the environment of a process it
// starts; whatever that process starts inherits it, so this finds them all
// even after they left the process group or were reparented. Where /proc is
// missing it returns nil.
func MarkedProcesses(marker string) []GroupProc {
	entry := []byte(marker + "\x00")
	self := os.Getpid()
	return liveProcs(func(pid int, dir string, _ int) bool {
		if pid == self {
			return false
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		return err == nil && (bytes.HasPrefix(env, entry) || bytes.Contains(env, append([]byte{0}, entry...)))
	})
}

// WaitGone waits up to timeout for the processes MarkedProcesses(marker)
// lists to be gone, and returns those still alive then (none: nil). A
// process SIGKILLed a moment ago can still be listed: signals are delivered
// asynchronously, and a process that is not our child gives no event to
// wait for, so /proc is polled.
func WaitGone(marker string, timeout time.Duration) []GroupProc {
	return pollGone(func() []GroupProc { return MarkedProcesses(marker) }, timeout)
}

// liveProcs walks /proc and lists the live (not zombie) processes that keep
// accepts; keep gets the pid, the process's /proc directory and its process
// group. Processes that exit during the walk are skipped.
func liveProcs(keep func(pid int, dir string, pgrp int) bool) []GroupProc {
	return liveProcsPPID(func(pid int, dir string, pgrp, _ int) bool { return keep(pid, dir, pgrp) })
}

// liveProcsPPID is liveProcs whose filter also sees the parent pid.
func liveProcsPPID(keep func(pid int, dir string, pgrp, ppid int) bool) []GroupProc {
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
		dir := filepath.Join("/proc", e.Name())
		st, ok := childproc.ProcStat(pid)
		if !ok || !st.Live() || !keep(pid, dir, st.PGrp, st.PPID) {
			continue // gone meanwhile, or dead and waiting to be reaped
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
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
	if err := childproc.SignalGroup(pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill group: %w", err)
	}
	if left := pollGone(func() []GroupProc { return GroupMembers(pgid) }, timeout); len(left) > 0 {
		return fmt.Errorf("kill group %d: still running after %v: %v", pgid, timeout, left)
	}
	return nil
}

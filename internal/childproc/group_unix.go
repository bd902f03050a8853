//go:build unix

package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := ProcStat(pid); ok && st.Live() && st.PGrp == pgid {
			return true
		}
	}
	return false
}

// Stat is what ProcStat reads from /proc/<pid>/stat.
type Stat struct {
	State   string // R, S, D, Z, X, ...
	PPID    int
	PGrp    int
	Session int // 0 when the session leader is outside this pid namespace
}

// Live reports whether the process is neither a zombie nor dead.
func (s Stat) Live() bool { return s.State != "Z" && s.State != "X" }

// ProcStat reads the state, parent pid, process group and session of
// process pid from /proc/<pid>/stat ("pid (comm) state ppid pgrp session
// ..."; comm may hold
// spaces and parens, so the fields are read after its last ')'). ok is
// false when the process is gone or there is no /proc.
func ProcStat(pid int) (st Stat, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return Stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0], PPID: ppid, PGrp: pgrp, Session: sid}, true
}

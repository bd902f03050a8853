//go:build windows

package childproc

// Windows has no process groups in the Unix sense and no signals. A group
// here is two things, both keyed by the leader's pid:
//
//   - a console process group (CREATE_NEW_PROCESS_GROUP, whose id is the
//     leader's pid): the polite stop, CTRL_BREAK_EVENT, reaches every
//     process of it that shares ccproxy's console;
//   - a Job Object (Start only) with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: every
//     process the leader starts is in it too, TerminateJobObject kills them
//     all, and when ccproxy dies (its handles close) the system kills them —
//     what the parent-death signal does on Linux.
//
// Start creates the child suspended, assigns it to a new job, then resumes
// it, so that nothing it starts can escape the job.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobs holds the Job Object of each group that Start started, by leader
// pid, and remembers the last maxEnded groups that ended. mu guards both
// and every use of a handle in byPID, so that a handle is never closed
// while in use.
//
// A job is closed when it is found empty (by GroupAlive, or by the sweep at
// each Start) or when its pid comes back for a new group (the old leader is
// then gone; what is left of its group is killed). Its entry then stays as
// a tombstone, so that a late SignalGroup of that group — after Wait, when
// Windows may already have given the pid to an unrelated process — does
// nothing instead of terminating that process by pid. At most maxEnded
// tombstones are kept, the oldest dropped first.
var jobs struct {
	mu    sync.Mutex
	byPID map[int]*job
	ended []endedGroup // oldest first
	seq   uint64
}

// maxEnded is how many ended groups jobs remembers.
const maxEnded = 1024

type job struct {
	h   windows.Handle // 0 once the group ended and the handle is closed
	seq uint64         // which group of this pid
}

type endedGroup struct {
	pid int
	seq uint64
}

// SetGroup makes cmd start as the leader of a new console process group, so
// that SignalGroup's CTRL_BREAK_EVENT reaches it and what it starts. Call
// it before cmd.Start; other SysProcAttr settings are kept. It does not put
// cmd in a Job Object — only Start can: use Start.
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// startInGroup starts cmd suspended, assigns it to a new kill-on-close Job
// Object, records the job and resumes the child. If any step after the
// start fails, the child is killed and waited for, and the error returned.
func startInGroup(cmd *exec.Cmd) error {
	h, err := newJob()
	if err != nil {
		return err
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	err = cmd.Start()
	cmd.SysProcAttr.CreationFlags &^= windows.CREATE_SUSPENDED
	if err != nil {
		windows.CloseHandle(h)
		return err
	}
	pid := cmd.Process.Pid
	if err := assign(h, pid); err != nil {
		windows.CloseHandle(h)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("childproc: starting %s in a job object: %w", cmd.Path, err)
	}
	// Recorded before it runs: a SignalGroup from now on reaches the job.
	register(pid, h)
	if err := resume(pid); err != nil {
		_ = killGroup(pid)
		_ = cmd.Wait()
		return fmt.Errorf("childproc: starting %s: %w", cmd.Path, err)
	}
	return nil
}

// newJob creates a Job Object whose processes are killed when its last
// handle closes. The handle is not inheritable: a child holding it would keep
// the job alive after ccproxy's death.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("childproc: CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("childproc: SetInformationJobObject(kill on close): %w", err)
	}
	return job, nil
}

// assign puts the (suspended) process pid in job h.
func assign(h windows.Handle, pid int) error {
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("OpenProcess %d: %w", pid, err)
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(h, ph); err != nil {
		return fmt.Errorf("AssignProcessToJobObject %d: %w", pid, err)
	}
	return nil
}

// resume resumes the threads of the suspended process pid (a process
// created suspended has one: its main thread).
func resume(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread %d of process %d: %w", te.ThreadID, pid, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread %d of process %d: %w", te.ThreadID, pid, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	if resumed == 0 {
		return fmt.Errorf("process %d has no thread to resume", pid)
	}
	return nil
}

// register records h as the job of the new group pid, and ends the groups
// whose jobs are empty.
func register(pid int, h windows.Handle) {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if jobs.byPID == nil {
		jobs.byPID = map[int]*job{}
	}
	for p, j := range jobs.byPID {
		if j.h == 0 {
			continue
		}
		if n, err := activeProcesses(j.h); err == nil && n == 0 {
			endLocked(p, j)
		}
	}
	if old := jobs.byPID[pid]; old != nil && old.h != 0 {
		// The pid was reused: the old group's leader is gone; what is left
		// of its group is killed with its job.
		_ = windows.TerminateJobObject(old.h, 1)
		endLocked(pid, old)
	}
	jobs.seq++
	jobs.byPID[pid] = &job{h: h, seq: jobs.seq}
}

// endLocked closes the job of group pid and keeps a tombstone of it,
// dropping the oldest tombstone beyond maxEnded. jobs.mu is held.
func endLocked(pid int, j *job) {
	windows.CloseHandle(j.h)
	j.h = 0
	jobs.ended = append(jobs.ended, endedGroup{pid, j.seq})
	if len(jobs.ended) > maxEnded {
		old := jobs.ended[0]
		jobs.ended = jobs.ended[1:]
		if cur := jobs.byPID[old.pid]; cur != nil && cur.seq == old.seq {
			delete(jobs.byPID, old.pid)
		}
	}
}

// jobBasicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobBasicAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// activeProcesses is the number of live processes in job.
func activeProcesses(job windows.Handle) (uint32, error) {
	var info jobBasicAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return info.ActiveProcesses, err
}

// SignalGroup stops group pgid. SIGKILL terminates every process of the
// group's Job Object (for a group not started by Start: the leader alone,
// with TerminateProcess). SIGTERM and SIGINT send CTRL_BREAK_EVENT to the
// console process group — the polite stop; where that is impossible
// (ccproxy has no console, or shares none with the child) they terminate
// as SIGKILL does, since nothing gentler exists. Signal 0 does nothing.
// Other signals are an error. A group that is already gone is not an
// error. A group started by Start and known to have ended is not signalled
// at all; one not started by Start is found by its leader's pid, which
// Windows may give to another process once the leader is waited for: signal
// such a group only before Wait returns.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("childproc: no process group %d", pgid)
	}
	switch sig {
	case 0, syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT:
	default:
		return fmt.Errorf("childproc: signal %v to group %d: not supported on Windows (SIGTERM, SIGINT and SIGKILL are)", sig, pgid)
	}
	if sig == 0 || isEnded(pgid) {
		return nil
	}
	if sig == syscall.SIGKILL {
		return killGroup(pgid)
	}
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pgid)); err == nil {
		return nil
	}
	return killGroup(pgid)
}

// isEnded reports whether pgid is a group started by Start that ended.
func isEnded(pgid int) bool {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	j := jobs.byPID[pgid]
	return j != nil && j.h == 0
}

// killGroup terminates group pgid: its job, or, for a group not started
// by Start, its leader alone.
func killGroup(pgid int) error {
	jobs.mu.Lock()
	if j := jobs.byPID[pgid]; j != nil {
		var err error
		if j.h != 0 {
			err = windows.TerminateJobObject(j.h, 1)
		}
		jobs.mu.Unlock()
		if err != nil {
			return fmt.Errorf("childproc: terminate the job of group %d: %w", pgid, err)
		}
		return nil
	}
	jobs.mu.Unlock()
	p, err := os.FindProcess(pgid)
	if err != nil {
		return nil // gone
	}
	defer p.Release()
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) && leaderAlive(pgid) {
		return fmt.Errorf("childproc: terminate process %d: %w", pgid, err)
	}
	return nil
}

// GroupAlive reports whether group pgid still has a live process: for a
// group started by Start, any process of its job; otherwise its leader.
func GroupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if j := jobs.byPID[pgid]; j != nil {
		if j.h == 0 {
			return false
		}
		if n, err := activeProcesses(j.h); err == nil {
			if n == 0 {
				endLocked(pgid, j)
			}
			return n > 0
		}
	}
	return leaderAlive(pgid)
}

// leaderAlive reports whether process pid is running.
func leaderAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED) // exists, not ours to open
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

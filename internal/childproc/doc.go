// Package childproc holds what ccproxy does the same way for every child
// process it starts (claude, MCP servers it probes, `claude mcp list`):
// start it in a process group of its own, so that everything it spawns can
// be signalled together; signal that group; tell whether the group still
// has a live member; and keep a bounded tail of its stderr for error
// reports.
//
// # The guard (Linux)
//
// On Linux, SetGroup rewrites the command so that it starts through a
// guard: the running binary itself (/proc/self/exe: ccproxy, or a test
// binary), re-executed with a marker argument that this package's init
// recognizes before anything else runs (runGuard). So every binary that
// uses SetGroup contains its guard; callers need no change.
//
//	ccproxy ──lifeline pipe (ccproxy holds the only write end)──▶ guard (group leader, subreaper)
//	                                                                 └─ command (same group; its
//	                                                                    streams and ExtraFiles as given)
//	                                                                      └─ what it starts (MCP servers…)
//
// The guard makes itself the child subreaper (PR_SET_CHILD_SUBREAPER), so
// whatever the command starts and orphans is reparented to it, even after
// setsid; it starts the command in its own process group with the
// parent-death signal SIGKILL, hands it its standard streams and extra
// files and keeps none open itself, and reaps every child. Then:
//
//   - the command ends: the guard sends SIGTERM to every descendant left,
//     SIGKILL after guardGrace (1 s), and when it has no child left exits
//     with the command's exit code, or dies by the command's signal
//     (without a core dump). Callers see the command's status.
//   - ccproxy ends, however (EOF on the lifeline pipe): the guard ends every
//     descendant the same way and exits.
//
// Signals: the caller signals the group (SignalGroup), which reaches the
// command and the guard; the guard catches and ignores the catchable
// ones (forwarding would deliver them twice). SignalGroup(pgid, SIGKILL)
// on a group led by a guard that is our child first SIGKILLs the guard's
// descendants (read from /proc, until none is alive, bounded), then the
// group: killing the guard first would leave what left the group orphaned
// to init. A signal to the guard's pid
// alone (cmd.Process.Signal) is not passed on, except SIGKILL, which ends
// the command through its parent-death signal. A command that Start
// cannot run (cmd.Err, a missing or non-executable file) is not wrapped,
// so Start reports the error as before; one that exec still refuses
// (bad interpreter, not an executable format) shows as exit status 127
// (not found) or 126 with "ccproxy: starting PATH: ..." on its stderr.
//
// Goroutines: the guard process has three (signal drain, reaper, lifeline
// reader); they end with it. In ccproxy the package starts none; the
// lifeline pipe is made once (sync.Once) and kept open for the process's
// life. Where /proc/self/exe is missing, SetGroup falls back to the
// parent-death signal alone.
//
// On other unix platforms the child gets no guard and no parent-death
// signal; on platforms without process groups the group functions do
// nothing.
package childproc

// Package childproc holds what ccproxy does the same way for every child
// process it starts (claude, MCP servers it probes, `claude mcp list`):
// start it in a process group of its own, so that everything it spawns can
// be signalled together; signal that group; tell whether the group still
// has a live member; and keep a bounded tail of its stderr for error
// reports.
//
// Start (SetGroup, then cmd.Start, then what the platform needs after the
// start) is the way to start a child; the group's id is the child's pid.
// Stop is the way to end one (stdin EOF, a grace, SIGTERM to the group, a
// grace, SIGKILL), Kill the way to end one at once, WaitGroupGone waits
// (polling: the members are not our children) until nothing of a group is
// left, and ExitStatus says how a child ended (exit code or signal name).
// Stop runs on the caller's goroutine; this package starts no goroutine of
// its own outside the guard process.
//
// # The guard (Linux)
//
// On Linux, SetGroup rewrites the command so that it starts through a
// guard: the running binary itself (/proc/self/exe: ccproxy, or a test
// binary), re-executed with a marker argument that this package's init
// recognizes before anything else runs (runGuard). So every binary that
// uses SetGroup contains its guard; callers need no change.
//
//	ccproxy ──lifeline pipe (ccproxy holds the only write end)──▶ guard (subreaper; alone in the
//	                                                                 │  group the caller sees)
//	                                                                 └─ command (a group of its own;
//	                                                                    its streams and ExtraFiles as given)
//	                                                                      └─ what it starts (MCP servers…)
//
// The guard makes itself the child subreaper (PR_SET_CHILD_SUBREAPER), so
// whatever the command starts and orphans is reparented to it, even after
// setsid; it starts the command in a process group of its own with the
// parent-death signal SIGKILL, hands it its standard streams and extra
// files and keeps none open itself, and reaps every child. Then:
//
//   - the command ends: the guard sends SIGTERM to every descendant left,
//     SIGKILL after guardGrace (1 s), and when it has no child left exits
//     with the command's exit code, or dies by the command's signal
//     (without a core dump). Callers see the command's status. It exits
//     with syscall.Exit: os.Exit in a binary built with -race (a test
//     binary is its own guard) first sleeps a second.
//   - ccproxy ends, however (EOF on the lifeline pipe): the guard ends every
//     descendant the same way (SIGKILL after parentGoneGrace, 0.5 s) and
//     exits.
//
// So the command's exit (its stdout closing, say) comes before the guard's,
// by as long as the guard takes to reap it and end the rest; a caller that
// must tell "the command exited" from "the command closed its stdout and
// runs on" without depending on that delay asks CommandEnded, which looks
// at the guard's descendants in /proc (none alive, a zombie or a task
// already exiting not counting: ended). Without a guard it knows nothing.
//
// Signals: the caller's pid and group id (cmd.Process.Pid) are the guard's.
// SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM sent to the
// guard or its group are forwarded once to the command's group, so
// SignalGroup works as without the guard. GroupAlive(pid) holds until the
// guard exits, which is after every descendant is gone. SIGKILL cannot be
// forwarded: SignalGroup(pgid, SIGKILL) on a guard that is our child first
// SIGKILLs the guard's descendants (read from /proc, until none is alive,
// bounded), then the guard; cmd.Process.Kill kills the guard alone, and
// the command by its parent-death signal (what it started then gets
// stdin EOF, as without the guard). SIGSTOP/SIGCONT are not forwarded.
// A command that Start cannot run (cmd.Err, a missing or non-executable
// file) is not wrapped, so Start reports the error as before; one that
// exec still refuses (bad interpreter, not an executable format) shows as
// exit status 127 (not found) or 126 with "ccproxy: starting PATH: ..." on
// its stderr.
//
// Goroutines: the guard process has three (signal forwarder, reaper,
// lifeline reader; a mutex guards the command's reaped flag); they end
// with it. In ccproxy the package starts none; the lifeline pipe is made
// once (sync.Once) and kept open for the process's life. Where /proc/self/exe is missing, SetGroup falls back to the
// parent-death signal alone.
//
// On Windows (group_windows.go) a group is a console process group plus a
// Job Object: Start creates the child suspended, assigns it to a new
// kill-on-close job and resumes it, so everything it starts is in the job;
// SIGKILL terminates the job, SIGTERM/SIGINT send CTRL_BREAK_EVENT to the
// console group (or terminate, when there is no shared console), and the
// system kills the job when ccproxy dies. A package-level map from leader
// pid to job handle, guarded by a mutex that is held while a handle is used,
// keeps the jobs; a job is closed once found empty, and the group is then
// remembered as ended (the last 1024), so that a late signal does not reach
// another process that got its pid. A child started with SetGroup and
// cmd.Start (not Start) has no job: only its leader can be terminated, found
// by pid. This is compile-checked here, not run: only Linux runs the
// suite.
//
// OpenTerminal (Linux) opens a pseudo-terminal pair for a child that
// insists on a terminal on one of its standard streams (`claude mcp login`
// on stdin): the tty end is opened O_NOCTTY, so it becomes nobody's
// controlling terminal and no SIGHUP comes of it; elsewhere it returns
// ErrNoTerminal.
//
// On other unix platforms the child gets no guard and no parent-death
// signal; on platforms without process groups the group functions do
// nothing.
package childproc

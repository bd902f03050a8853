// Package childproc holds what ccproxy does the same way for every child
// process it starts (claude, MCP servers it probes, `claude mcp list`):
// start it in a process group of its own, so that everything it spawns can
// be signalled together; signal that group; tell whether the group still
// has a live member; and keep a bounded tail of its stderr for error
// reports.
//
// Start (SetGroup, then cmd.Start, then what the platform needs after the
// start) is the way to start a child; the group's id is the child's pid.
//
// On Linux the child also gets SIGKILL from the kernel if ccproxy dies
// without stopping it (kill -9, a crash); its own children then see EOF on
// their stdin and end.
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
// suite. On other platforms without process groups the group functions do
// nothing.
package childproc

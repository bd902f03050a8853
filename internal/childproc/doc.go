// Package childproc holds what ccproxy does the same way for every child
// process it starts (claude, MCP servers it probes, `claude mcp list`):
// start it in a process group of its own, so that everything it spawns can
// be signalled together; signal that group; tell whether the group still
// has a live member; and keep a bounded tail of its stderr for error
// reports.
//
// On Linux the child also gets SIGKILL from the kernel if ccproxy dies
// without stopping it (kill -9, a crash); its own children then see EOF on
// their stdin and end. On other platforms without process groups the group
// functions do nothing.
package childproc

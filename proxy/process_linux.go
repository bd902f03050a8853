package proxy

import "syscall"

// setParentDeathSignal has the kernel kill claude if ccproxy dies without
// closing it (kill -9, a crash). Its MCP servers then see EOF on their
// stdin and end.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

package testkit

import (
	"os/exec"
	"syscall"
)

// DieWithTest has cmd killed (SIGKILL) when the test binary dies, so that a
// test that panics or times out before its cleanup leaves no daemon behind.
// Call it before cmd.Start. It keeps any SysProcAttr already set.
//
// Linux sends the signal when the thread that started cmd exits; the Go
// runtime keeps its threads for the life of the process unless a goroutine
// locked to one exits, which tests do not do.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

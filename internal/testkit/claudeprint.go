package testkit

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
)

// ClaudePrint runs `claude -p --output-format stream-json --verbose` with
// args added and prompt on stdin, in dir with env, in a process group of
// its own that is killed when it ends (and on a 90 s timeout, which fails
// the test). It returns stdout, stderr and the error of the run (an
// *exec.ExitError when claude exited non-zero).
func ClaudePrint(t testing.TB, dir string, env []string, prompt string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Claude(t), append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(prompt)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	childproc.SetGroup(cmd)
	cmd.Cancel = func() error { return childproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		if kerr := KillGroup(cmd.Process.Pid, 5*time.Second); kerr != nil {
			t.Error(kerr)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("claude -p timed out after 90 s; stderr: %s", errOut.String())
	}
	return out.String(), errOut.String(), err
}

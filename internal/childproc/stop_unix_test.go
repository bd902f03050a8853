//go:build unix

package childproc

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
	"time"
)

// stopped starts script under sh with a stdin pipe, waits until it has
// printed its first line (it is set up), and returns the command, its stdin
// and a channel closed once it is reaped.
func stopped(t *testing.T, script string) (*exec.Cmd, io.WriteCloser, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the script did not start: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { Kill(cmd.Process, cmd.Process.Pid); <-exited })
	return cmd, stdin, exited
}

func TestStopPolite(t *testing.T) {
	// Exits at stdin EOF: no signal is needed, and none is sent.
	cmd, stdin, exited := stopped(t, "echo ready; cat >/dev/null; exit 7")
	if killed := Stop(cmd.Process, cmd.Process.Pid, exited, func() { stdin.Close() }, time.Minute, time.Minute); killed {
		t.Fatal("Stop sent SIGKILL to a process that exits at EOF")
	}
	<-exited
	if code, sig := ExitStatus(cmd.ProcessState); code != 7 || sig != "" {
		t.Fatalf("ExitStatus = %d, %q; want 7 and no signal (no signal was needed)", code, sig)
	}
}

func TestStopTerm(t *testing.T) {
	// Ignores EOF, dies of SIGTERM.
	cmd, stdin, exited := stopped(t, "echo ready; exec sleep 1000")
	if killed := Stop(cmd.Process, cmd.Process.Pid, exited, func() { stdin.Close() }, 10*time.Millisecond, time.Minute); killed {
		t.Fatal("Stop sent SIGKILL to a process that SIGTERM ends")
	}
	<-exited
	if _, sig := ExitStatus(cmd.ProcessState); sig != "SIGTERM" {
		t.Fatalf("signal %q, want SIGTERM", sig)
	}
}

func TestStopKill(t *testing.T) {
	// Ignores EOF and SIGTERM: SIGKILL, and Stop says so.
	cmd, stdin, exited := stopped(t, "trap '' TERM; echo ready; while :; do sleep 0.01; done")
	if killed := Stop(cmd.Process, cmd.Process.Pid, exited, func() { stdin.Close() }, 10*time.Millisecond, 10*time.Millisecond); !killed {
		t.Fatal("Stop did not report SIGKILL for a process that ignores SIGTERM")
	}
	<-exited
	if !WaitGroupGone(cmd.Process.Pid, 5*time.Second) {
		t.Fatal("the group is still alive after SIGKILL")
	}
	if code, sig := ExitStatus(cmd.ProcessState); sig != "SIGKILL" || code != -1 {
		t.Fatalf("ExitStatus = %d, %q; want -1, SIGKILL", code, sig)
	}
	if code, sig := ExitStatus(nil); code != -1 || sig != "" {
		t.Fatalf("ExitStatus(nil) = %d, %q", code, sig)
	}
}

package testkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A process started with DieWithTest is killed when the process that
// started it dies, even by SIGKILL, which runs no cleanup.
func TestDieWithTest(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep command: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("CCPROXY_TESTKIT_DIEWITH=%d-%d", os.Getpid(), time.Now().UnixNano())
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), "TESTKIT_DIEWITH_PARENT="+sleep, marker)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		parent.Process.Kill()
		parent.Wait()
		for _, p := range MarkedProcesses(marker) {
			if q, err := os.FindProcess(p.PID); err == nil {
				q.Kill()
			}
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("parent said %q, %v", line, err)
	}
	if got := MarkedProcesses(marker); len(got) != 2 { // the parent and its sleep
		t.Fatalf("before the kill: %v, want the parent and its child", got)
	}
	parent.Process.Kill()
	parent.Wait()
	if left := WaitGone(marker, 10*time.Second); len(left) != 0 {
		t.Errorf("the child outlived its parent's SIGKILL: %v", left)
	}
}

// init makes this test binary the parent TestDieWithTest starts, when it
// finds TESTKIT_DIEWITH_PARENT (the sleep command): it starts a sleep with
// DieWithTest (which inherits the marker), says so, and waits to be killed.
func init() {
	sleep := os.Getenv("TESTKIT_DIEWITH_PARENT")
	if sleep == "" {
		return
	}
	cmd := exec.Command(sleep, "60")
	DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("started")
	cmd.Wait()
	os.Exit(0)
}

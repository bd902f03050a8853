//go:build unix

package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// MarkedProcesses finds a process by the marker in its environment (a whole
// entry, not a suffix of one), GroupMembers by its group; WaitGone reports
// it while it runs and nothing once it is gone.
func TestMarkedProcesses(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	marker := fmt.Sprintf("CCPROXY_TESTKIT_MARKER=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(sleep, "60")
	cmd.Env = append(os.Environ(), marker)
	// Its own group, without childproc's guard: this process is the only one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := cmd.Process.Pid

	found := MarkedProcesses(marker)
	if len(found) != 1 || found[0].PID != pid {
		t.Fatalf("MarkedProcesses = %v, want only pid %d", found, pid)
	}
	if got := MarkedProcesses("X" + marker); len(got) != 0 {
		t.Errorf("a marker that is only the end of an entry matched %v", got)
	}
	if got := GroupMembers(pid); len(got) != 1 || got[0].PID != pid || got[0].Command != sleep+" 60" {
		t.Errorf("GroupMembers(%d) = %v, want [%d %s 60]", pid, got, pid, sleep)
	}
	if left := WaitGone(marker, 0); len(left) != 1 || left[0].PID != pid {
		t.Errorf("WaitGone while it runs = %v, want pid %d", left, pid)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if left := WaitGone(marker, 5*time.Second); len(left) != 0 {
		t.Errorf("WaitGone after it was killed and reaped = %v", left)
	}
	if got := GroupMembers(pid); len(got) != 0 {
		t.Errorf("GroupMembers(%d) after the group is gone = %v", pid, got)
	}
}

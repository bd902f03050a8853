//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A shell and its child in their own group: both are signalled together,
// and the group is gone afterwards.
func TestGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	if !GroupAlive(pgid) {
		t.Fatal("the group is not alive after Start")
	}
	if err := SignalGroup(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for GroupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatal("the sleep child outlived SIGKILL of its group")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := SignalGroup(pgid, syscall.SIGTERM); err != nil {
		t.Errorf("signalling a group that is gone: %v", err)
	}
	if err := SignalGroup(1, syscall.SIGTERM); err == nil {
		t.Error("group 1 must be refused")
	}
}

//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
	"testing"
)

// Start starts the command as the leader of a group of its own.
func TestStart(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	if g, err := syscall.Getpgid(pgid); err != nil || g != pgid {
		t.Errorf("the child's group is %d (%v), want its own, %d", g, err, pgid)
	}
	if err := SignalGroup(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := Start(exec.Command("/nonexistent/cmd")); err == nil {
		t.Error("starting a missing command succeeded")
	}
}

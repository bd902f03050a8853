package childproc

import "os/exec"

// Start starts cmd as the leader of a group of its own (SetGroup), and does
// what the platform needs right after the start for the group to be
// signalled and killed whole: on Windows it puts the child in a Job Object
// before the child runs any code (see group_windows.go). Use it in place of
// SetGroup followed by cmd.Start. The group's id is cmd.Process.Pid.
func Start(cmd *exec.Cmd) error {
	SetGroup(cmd)
	return startInGroup(cmd)
}

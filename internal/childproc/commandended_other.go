//go:build !linux

package childproc

import "os/exec"

// CommandEnded: without the guard (Linux only) the process cmd waits for
// is the command itself, so nothing is known beyond its own exit.
func CommandEnded(cmd *exec.Cmd) (ended, known bool) { return false, false }

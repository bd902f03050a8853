//go:build !windows

package childproc

import "os/exec"

// startInGroup starts cmd; SetGroup has prepared it. Nothing more is needed
// after the start here.
func startInGroup(cmd *exec.Cmd) error { return cmd.Start() }

//go:build !linux

package testkit

import "os/exec"

// DieWithTest does nothing here: only Linux has a parent-death signal, and
// only Linux runs the suite. See diewith_linux.go.
func DieWithTest(cmd *exec.Cmd) {}

//go:build !unix

package main

import "os/exec"

func startGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {}

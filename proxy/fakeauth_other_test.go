//go:build !linux

package proxy

func isTerminal(int) bool { return false }

//go:build !linux

package fakeclaude

func isTerminal(int) bool { return false }

//go:build !windows

package mcpconfig

// ownerOnly does nothing here: the file's mode (0600) already keeps other
// users out. See private_windows.go.
func ownerOnly(path string) error { return nil }

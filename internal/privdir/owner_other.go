//go:build !windows

package privdir

// OwnerOnly does nothing here: the file's mode (0600) already keeps other
// users out. See owner_windows.go.
func OwnerOnly(path string) error { return nil }

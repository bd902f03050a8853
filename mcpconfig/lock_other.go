//go:build !unix && !windows

package mcpconfig

import "os"

// lockFile does nothing where the platform has no file locks (js, wasip1,
// plan9): writes are then serialized within the process only (settingsMu).
func lockFile(*os.File) error { return nil }

//go:build unix

package mcpconfig

import "syscall"

// oNoFollow makes os.OpenFile refuse a link as the last part of the path.
const oNoFollow = syscall.O_NOFOLLOW

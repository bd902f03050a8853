//go:build !linux

package claudecli

import "os"

// EnlargePipe does nothing where the pipe size cannot be set.
func EnlargePipe(*os.File) {}

//go:build windows

package stream

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		panic(err)
	}
	// Filetimes count 100 ns ticks.
	k := int64(kernel.HighDateTime)<<32 | int64(kernel.LowDateTime)
	u := int64(user.HighDateTime)<<32 | int64(user.LowDateTime)
	return time.Duration((k + u) * 100)
}

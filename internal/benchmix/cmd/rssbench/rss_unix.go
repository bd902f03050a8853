//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSMiB is the peak resident memory of an exited process, in MiB, from
// its rusage (maxrss is KiB on Linux, bytes on macOS).
func peakRSSMiB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / (1 << 20)
	}
	return float64(ru.Maxrss) / 1024
}

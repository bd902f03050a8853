//go:build unix

package proxy

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting. The lock lasts
// as long as f is open in this process (and dies with it).
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

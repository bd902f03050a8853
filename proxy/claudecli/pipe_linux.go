package claudecli

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked for claude's stdout pipe: a multi-megabyte
// line (a base64 image, twice) then crosses in a few big steps rather than
// sixteen-odd 64 KiB ones, each a wakeup of both sides.
const pipeSize = 1 << 20

// EnlargePipe raises the capacity of the pipe f belongs to (best effort:
// the kernel caps it at /proc/sys/fs/pipe-max-size for unprivileged users).
func EnlargePipe(f *os.File) {
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

//go:build unix

package stream

import "syscall"

// piecesMapped says whether mapPiece takes memory outside the Go heap.
const piecesMapped = true

// mapPiece returns n bytes of zeroed memory mapped outside the Go heap, or
// nil when the system refuses. unmapPiece must be given the same slice
// (same start and capacity) to give it back. A Reader keeps the pieces of a
// long line there so that each can be given back to the system as soon as
// it is copied into the joined line, which the garbage collector cannot do.
func mapPiece(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

// unmapPiece gives a piece from mapPiece back to the system.
func unmapPiece(b []byte) {
	// It cannot fail for a slice that mapPiece returned: if it did, the
	// piece would only stay mapped.
	_ = syscall.Munmap(b)
}

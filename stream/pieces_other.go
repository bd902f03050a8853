//go:build !unix

package stream

// piecesMapped says whether mapPiece takes memory outside the Go heap.
const piecesMapped = false

// mapPiece returns nil: the pieces of a long line are taken from the Go
// heap here (see pieces_unix.go).
func mapPiece(int) []byte { return nil }

func unmapPiece([]byte) {}

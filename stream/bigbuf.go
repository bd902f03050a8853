package stream

import (
	"math/bits"
	"sync"
)

// Buffers for long lines and decoded attachments.
//
// A stream of images makes a Reader and a Normalizer each need a buffer of
// several megabytes for one line at a time, line after line. Allocating
// each anew costs zeroing it and, at a few hundred megabytes a second, a
// good part of the garbage collector's work; keeping the largest one in
// each Reader pins it for the life of a session that has gone quiet. So
// they come from pools shared by every Reader and Normalizer of the
// process, eight per doubling of size from 1 MiB to 128 MiB (so a buffer is
// at most an eighth larger than asked for): a buffer is reused while lines
// keep needing one of its size, and the pools let go of what nobody takes
// within two garbage collections (sync.Pool), that is within minutes of a
// burst even in an idle process (the runtime collects at least every two
// minutes).
const (
	bigMinShift = 20 // sizes up to 1 MiB (retainBytes) are each owner's own
	bigMaxShift = 27 // sizes over 128 MiB are made and dropped
	bigSteps    = 8  // classes per doubling
)

var bigPools [(bigMaxShift - bigMinShift) * bigSteps]sync.Pool

// bigClass returns the pool whose buffers are the smallest that hold size
// bytes, and their size; -1 when size is outside the pooled range.
func bigClass(size int) (class, classSize int) {
	if size <= 1<<bigMinShift || size > 1<<bigMaxShift {
		return -1, 0
	}
	k := bits.Len(uint(size-1)) - 1 // 1<<k < size <= 2<<k
	step := 1 << (k - 3)
	j := (size - 1<<k + step - 1) / step // 1..8
	return (k-bigMinShift)*bigSteps + j - 1, 1<<k + j*step
}

// getBig returns an empty buffer with room for at least size bytes: a
// pooled one (not zeroed: callers only read what they wrote) when size is
// in the pooled range, else a new one of exactly size.
func getBig(size int) []byte {
	c, n := bigClass(size)
	if c < 0 {
		return make([]byte, 0, size)
	}
	if p, ok := bigPools[c].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// putBig gives b, which the caller no longer uses, back to its pool; a
// buffer not of a pool's size is left to the garbage collector.
func putBig(b []byte) {
	c, n := bigClass(cap(b))
	if c < 0 || cap(b) != n {
		return
	}
	b = b[:0]
	bigPools[c].Put(&b)
}

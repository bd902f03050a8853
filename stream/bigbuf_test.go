package stream

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// Every size in the pooled range gets the smallest class that holds it, at
// most an eighth larger; a class's own size maps to itself; sizes outside
// the range are not pooled.
func TestBigClass(t *testing.T) {
	prevClass, prevSize := -1, 0
	check := func(size int) {
		c, n := bigClass(size)
		if c < 0 {
			t.Fatalf("size %d: not pooled", size)
		}
		if n < size || n > size+size/8+1 {
			t.Errorf("size %d: class size %d", size, n)
		}
		if c2, n2 := bigClass(n); c2 != c || n2 != n {
			t.Errorf("class size %d of %d maps to %d/%d, not %d/%d", n, size, c2, n2, c, n)
		}
		if c < prevClass || c == prevClass && n != prevSize || c > prevClass+1 {
			t.Errorf("size %d: class %d (%d) after %d (%d)", size, c, n, prevClass, prevSize)
		}
		prevClass, prevSize = c, n
	}
	for size := 1<<bigMinShift + 1; size <= 1<<bigMaxShift; size += 4093 {
		check(size)
	}
	check(1 << bigMaxShift)
	if prevClass != len(bigPools)-1 {
		t.Errorf("the largest size is in class %d of %d", prevClass, len(bigPools))
	}
	for _, size := range []int{0, 1, retainBytes, 1<<bigMaxShift + 1} {
		if c, _ := bigClass(size); c >= 0 {
			t.Errorf("size %d is pooled (class %d)", size, c)
		}
	}
}

// Buffers given back are reused: 100 rounds of taking and giving back a
// 3 MiB buffer allocate a few, not 100 (collections are off, so the pool
// keeps what it is given); a size outside the pools is made exactly.
func TestBigPoolReuse(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 100 {
		b := getBig(3<<20 - i)
		if len(b) != 0 || cap(b) < 3<<20 {
			t.Fatalf("getBig(3 MiB): len %d cap %d", len(b), cap(b))
		}
		putBig(append(b, "data"...))
	}
	runtime.ReadMemStats(&after)
	// Under the race detector sync.Pool drops a quarter of what it is
	// given, at random: more than 60 of 100 would take odds of about 1e-14.
	limit := uint64(10)
	if raceEnabled {
		limit = 60
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit*(3<<20) {
		t.Errorf("100 rounds of a 3 MiB buffer allocated %d MiB, want at most %d buffers' worth", got>>20, limit)
	}
	if small := getBig(4096); cap(small) != 4096 {
		t.Errorf("getBig(4096) has cap %d, want exactly 4096 (not pooled)", cap(small))
	}
	if huge := getBig(1<<bigMaxShift + 1); cap(huge) != 1<<bigMaxShift+1 {
		t.Errorf("getBig(128 MiB + 1) has cap %d, want exactly that (not pooled)", cap(huge))
	}
}

package proxy

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// tailBuffer keeps the last max bytes written to it (claude's stderr, for
// the exit report). It is safe for concurrent use.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64 // bytes that fell off the front
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped += int64(len(t.buf) + len(p) - t.max)
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the tail as valid UTF-8 text. When bytes were dropped it
// starts at a line (or at least a character) boundary, after a marker.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	b := string(t.buf)
	dropped := t.dropped
	t.mu.Unlock()
	if dropped > 0 {
		if i := strings.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		} else {
			for len(b) > 0 && !utf8.RuneStart(b[0]) {
				b = b[1:]
			}
		}
		b = "[…earlier stderr dropped…]\n" + b
	}
	return strings.ToValidUTF8(b, "\uFFFD")
}

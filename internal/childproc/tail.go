package childproc

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Tail keeps the last Max bytes written to it (a child's stderr, for an
// error report). It is safe for concurrent use.
type Tail struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64 // bytes that fell off the front
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the end of what was written; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		t.dropped += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Text returns the tail as valid UTF-8 and whether earlier bytes were
// dropped; then it starts at a line (or at least a character) boundary.
func (t *Tail) Text() (text string, truncated bool) {
	t.mu.Lock()
	b := string(t.buf)
	truncated = t.dropped > 0
	t.mu.Unlock()
	if truncated {
		if i := strings.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		} else {
			for len(b) > 0 && !utf8.RuneStart(b[0]) {
				b = b[1:]
			}
		}
	}
	return strings.ToValidUTF8(b, "\uFFFD"), truncated
}

// Head keeps the first Max bytes written to it (a child's short output,
// such as `--version`, or the start of an error message) and discards the
// rest. It is safe for concurrent use.
type Head struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	truncated bool
}

// NewHead returns a Head keeping the first max bytes.
func NewHead(max int) *Head { return &Head{max: max} }

// Write keeps what fits; it never fails.
func (h *Head) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	room := max(h.max-len(h.buf), 0)
	if len(p) > room {
		h.truncated = true
	}
	h.buf = append(h.buf, p[:min(len(p), room)]...)
	return len(p), nil
}

// String returns what was kept.
func (h *Head) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.buf)
}

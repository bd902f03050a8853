//go:build unix

package history

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO named like a session file is refused at once, not waited on
// (before, the open blocked until a writer came, holding its request).
func TestOpenRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s1.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	f, err := openNoFollow(p)
	if err == nil {
		f.Close()
		t.Fatal("a FIFO was opened as a session file")
	}
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("opening a FIFO: %v, want ErrNotAllowed", err)
	}
}

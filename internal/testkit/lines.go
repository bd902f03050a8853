package testkit

import (
	"bufio"
	"errors"
	"io"
	"testing"
	"time"
)

// MaxLineBytes bounds one line read by ReadLines (a stream-json line with
// images can be megabytes long).
const MaxLineBytes = 64 << 20

// ReadLines reads r line by line on a goroutine owned by the test and sends
// each line, without its line ending, on the returned channel, which holds up
// to buffer unread lines and is closed when r ends. When the test ends the
// goroutine stops sending, r is closed (so a pending Read returns and a
// writer on the other end stops) and the goroutine is waited for; a line over
// MaxLineBytes stops the reading (the channel closes) and fails the test then.
func ReadLines(t testing.TB, r io.ReadCloser, buffer int) <-chan string {
	lines := make(chan string, buffer)
	stop, exited := make(chan struct{}), make(chan struct{})
	var readErr error // set before exited is closed
	go func() {
		defer close(exited)
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
		readErr = sc.Err()
	}()
	t.Cleanup(func() {
		close(stop)
		r.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("ReadLines: the reader goroutine did not stop 10 s after its reader was closed")
			return
		}
		if errors.Is(readErr, bufio.ErrTooLong) {
			t.Errorf("ReadLines: a line longer than %d bytes; reading stopped there", MaxLineBytes)
		}
	})
	return lines
}

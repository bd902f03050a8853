package testkit

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// Lines arrive without their endings and the channel closes at the end of
// the input; when the test ends with lines unread and the writer still
// writing, the reader stops and closes its end, so the writer is told.
func TestReadLines(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, "one\ntwo\r\n\nlast")
		pw.Close()
	}()
	var got []string
	for l := range ReadLines(t, pr, 1) {
		got = append(got, l)
	}
	if fmt.Sprintf("%q", got) != `["one" "two" "" "last"]` {
		t.Errorf("lines %q", got)
	}

	pr, pw = io.Pipe()
	writeErr := make(chan error, 1)
	t.Run("unread", func(t *testing.T) {
		go func() {
			for {
				if _, err := io.WriteString(pw, "a line\n"); err != nil {
					writeErr <- err
					return
				}
			}
		}()
		if l := <-ReadLines(t, pr, 4); l != "a line" {
			t.Errorf("first line %q", l)
		}
	}) // the subtest's cleanup stops the reader
	if err := <-writeErr; !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the writer got %v, want io.ErrClosedPipe", err)
	}
}

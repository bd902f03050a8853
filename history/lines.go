package history

import (
	"bytes"
	"io"
	"sync/atomic"

	"github.com/ccproxy/ccproxy/stream"
)

// feeder hands a stream.Reader the bytes of a file one line at a time: no
// Read returns bytes past a "\n". The bufio.Reader inside stream.Reader then
// never holds bytes beyond the line it returned, so the bytes handed out so
// far are exactly the offset just after that line: the cursor a page of
// Read ends at. It reads the file in large chunks of its own.
type feeder struct {
	r     io.Reader
	buf   []byte
	start int // buf[start:end] not yet handed out
	end   int
	off   int64 // bytes handed out, plus the offset reading started at
	err   error
	nl    bool          // the last byte handed out was "\n"
	count *atomic.Int64 // bytes read from r, for tests and stats
}

const (
	feedBuffer    = 256 << 10
	minFeedBuffer = 4 << 10
)

// newFeeder reads r, whose remaining length is about left bytes (for the
// size of its buffer), from offset off.
func newFeeder(r io.Reader, off, left int64, count *atomic.Int64) *feeder {
	size := int(min(max(left+1, minFeedBuffer), feedBuffer))
	return &feeder{r: r, buf: make([]byte, size), off: off, nl: true, count: count}
}

// Read implements io.Reader: it returns buffered bytes up to and including
// the next "\n".
func (f *feeder) Read(p []byte) (int, error) {
	if f.start == f.end {
		if f.err != nil {
			return 0, f.err
		}
		n, err := f.r.Read(f.buf)
		f.start, f.end, f.err = 0, n, err
		f.count.Add(int64(n))
		if n == 0 {
			if err == nil {
				return 0, nil
			}
			return 0, err
		}
	}
	chunk := f.buf[f.start:f.end]
	if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
		chunk = chunk[:i+1]
	}
	n := copy(p, chunk)
	f.start += n
	f.off += int64(n)
	f.nl = p[n-1] == '\n'
	return n, nil
}

// lineReader is a stream.Reader over a feeder: lines capped at max bytes,
// with the offset after each line.
type lineReader struct {
	f *feeder
	r *stream.Reader
}

func newLineReader(r io.Reader, off, left int64, maxLine int, count *atomic.Int64) *lineReader {
	f := newFeeder(r, off, left, count)
	return &lineReader{f: f, r: stream.NewReader(f, maxLine)}
}

// next returns the next non-blank line (or stream's oversized_line event
// standing for one over the cap), the offset just after it, and whether it
// ended with "\n" (a last line without one may still be being written).
func (l *lineReader) next() (line []byte, end int64, complete bool, err error) {
	line, err = l.r.Next()
	return line, l.f.off, l.f.nl, err
}

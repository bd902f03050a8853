package stream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"unsafe"
)

const (
	// DefaultMaxLine is the longest line a Reader returns whole (64 MiB).
	// The CLI prints base64 images twice on one line, so lines of several
	// megabytes are normal; anything longer is replaced by an
	// oversized_line event.
	DefaultMaxLine = 64 << 20

	// previewBytes is how much of an oversized line is kept as its preview.
	previewBytes = 256

	// readBufferSize is the size of the bufio.Reader under a Reader.
	readBufferSize = 64 << 10

	// retainBytes is the largest line buffer a Reader keeps between lines
	// (its base buffer). A longer line gets a buffer of its own, given back
	// (to the pools of bigbuf.go, which let go of what is not taken again)
	// when the next line is asked for, so one huge line does not pin its
	// memory for the life of the session.
	// It is also the pools' floor (bigMinShift): a buffer of this size or
	// less is never pooled, so putBig keeps a base or scratch buffer out.
	retainBytes = 1 << bigMinShift

	// chunkMax is the largest piece a long line is read into. A long line
	// is read into pieces of growing size (never copied while it grows),
	// then copied once into a buffer of its length (an eighth more at most,
	// bigbuf.go); a line that goes over the cap is dropped without that
	// copy. The pieces are mapped outside the Go heap where the system
	// allows it (pieces_unix.go), and each is given back as soon as it is
	// copied: so a line under the cap costs at most its buffer (its length
	// and an eighth) plus one piece, and a line over it at most the cap
	// (and an eighth) plus one piece. Elsewhere
	// they are garbage collected, and a line under the cap costs about
	// twice its length, briefly.
	chunkMax = 16 << 20
)

// Reader splits the CLI's stdout into lines of any length up to a cap.
//
// A line longer than the cap is drained without being held in memory and
// replaced by a synthetic event
//
//	{"type":"ccproxy","subtype":"oversized_line","bytes":N,"limit":L,"preview":"<first 256 bytes>"}
//
// and reading goes on with the next line. Trailing "\r" and surrounding
// whitespace are trimmed, blank lines are skipped. A Reader never holds more
// than the cap plus 16 MiB (a line over the cap), or a line under the cap
// plus 16 MiB while that line is completed (twice the line on systems
// without anonymous mappings, see chunkMax), each with up to an eighth more
// for the size classes of its buffer. Buffers over 1 MiB it is done
// with go back to pools shared by the process (bigbuf.go), which hold them
// until they are taken again or collected. It is not safe for concurrent
// use.
type Reader struct {
	br       *bufio.Reader
	max      int
	line     []byte   // accumulates the current line
	synth    []byte   // the last synthetic event
	oversize int      // oversized lines seen
	err      error    // sticky error, returned once the buffered line is out
	base     []byte   // the kept buffer, at most retainBytes
	hint     int      // length of the last line longer than retainBytes
	lines    int      // lines read so far, blank ones included
	chunks   [][]byte // full pieces of a long line; line is the last one
	held     int      // bytes in chunks
	mapped   [][]byte // pieces mapped outside the heap, whole, until joined or dropped
}

// NewReader returns a Reader over r whose lines may be at most maxLine bytes
// long (not counting the line terminator); maxLine <= 0 means
// DefaultMaxLine.
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, readBufferSize), max: maxLine}
}

// Oversized reports how many lines were over the cap so far.
func (r *Reader) Oversized() int { return r.oversize }

// Line returns the 1-based number of the line Next returned last, blank
// lines included, for messages that say where input was wrong.
func (r *Reader) Line() int { return r.lines }

// Next returns the next non-blank line without its terminator, or the
// synthetic oversized_line event standing for a line over the cap. The slice
// is valid until the next call. At the end of input Next returns io.EOF; a
// last line without "\n" is returned first. A read error other than EOF is
// returned after the lines read before it.
func (r *Reader) Next() ([]byte, error) {
	if cap(r.line) > retainBytes {
		r.hint = len(r.line)
		putBig(r.line)
		r.line = r.base
	}
	for {
		if r.err != nil {
			return nil, r.err
		}
		line, oversized, total, err := r.readLine()
		if err != nil {
			r.err = err
		}
		if oversized {
			r.oversize++
			return r.oversizedEvent(total, line), nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			return line, nil
		}
	}
}

// readLine reads up to and including the next '\n'. It returns the line
// without its terminator (in the read buffer when it is all there, else in
// r.line); when the line is over the cap it returns only its
// first previewBytes, oversized=true, and the line's full length in total.
func (r *Reader) readLine() (line []byte, oversized bool, total int, err error) {
	r.line = r.line[:0]
	r.lines++
	for {
		chunk, rerr := r.br.ReadSlice('\n')
		end := len(chunk)
		if end > 0 && chunk[end-1] == '\n' {
			end--
		}
		if rerr == nil && total == 0 && end <= r.max {
			// The whole line is in the read buffer: no copy. It stays
			// valid until the next read, that is the next call to Next.
			return chunk[:end], false, end, nil
		}
		total += end
		switch {
		case oversized:
			// Draining: nothing is kept past the preview.
		case total > r.max:
			// The line just went over the cap: keep its preview, let go of
			// the rest, and drain from now on.
			oversized = true
			if len(r.chunks) > 0 {
				// The preview is in the first piece; let them all go.
				r.line = append(r.base[:0], r.chunks[0][:min(previewBytes, len(r.chunks[0]))]...)
				putBig(r.chunks[0]) // the first piece is never mapped: it is base or a hinted buffer
				clear(r.chunks)
				r.chunks, r.held = r.chunks[:0], 0
				r.unmapAll()
			}
			if n := len(r.line); n < previewBytes {
				r.line = append(r.line, chunk[:min(previewBytes-n, end)]...)
			} else if cap(r.line) > retainBytes {
				long := r.line
				r.line = append(r.base[:0], long[:previewBytes]...)
				putBig(long) // let the long buffer go
			} else {
				r.line = r.line[:previewBytes]
			}
		default:
			r.add(chunk[:end])
		}
		if rerr == nil || !errors.Is(rerr, bufio.ErrBufferFull) {
			r.join()
		}
		switch {
		case rerr == nil:
			return r.line, oversized, total, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		default:
			return r.line, oversized, total, rerr
		}
	}
}

// add appends p to the line. Up to retainBytes the line is in the base
// buffer, which doubles. Past that, the line goes on in a buffer sized at
// once from the last long line (so a stream of images gets one buffer per
// line, from the pools of bigbuf.go, an eighth larger at most), but never
// more than 8 times what is needed (one huge line must not make every later
// long line take as much) nor more than the cap; and past that buffer, or
// without a last long line, in pieces (see chunkMax).
func (r *Reader) add(p []byte) {
	need := r.held + len(r.line) + len(p)
	switch {
	case len(r.line)+len(p) <= cap(r.line):
	case need <= retainBytes:
		nb := make([]byte, len(r.line), min(max(2*cap(r.line), need, 4096), retainBytes))
		copy(nb, r.line)
		r.line, r.base = nb, nb[:0]
	case r.hint > 0 && len(r.chunks) == 0 && cap(r.line) <= retainBytes:
		c := max(min(r.hint+r.hint/8, 8*need, r.max), need)
		nb := getBig(c)[:len(r.line)]
		copy(nb, r.line)
		r.line = nb
	default:
		// Fill the current piece, then go on in a new one.
		k := copy(r.line[len(r.line):cap(r.line)], p)
		r.line, p = r.line[:len(r.line)+k], p[k:]
		r.chunks = append(r.chunks, r.line)
		r.held += len(r.line)
		size := min(max(2*cap(r.line), retainBytes), chunkMax, r.max-r.held)
		r.line = r.piece(max(size, len(p)))
	}
	r.line = append(r.line, p...)
}

// piece returns an empty buffer of capacity size for the next piece of a
// long line: mapped outside the heap when the system allows it.
func (r *Reader) piece(size int) []byte {
	if b := mapPiece(size); b != nil {
		r.mapped = append(r.mapped, b)
		return b[:0]
	}
	return make([]byte, 0, size)
}

// unmap gives back the mapped piece p starts, if any, and says whether it
// did.
func (r *Reader) unmap(p []byte) bool {
	start := unsafe.SliceData(p)
	for i, m := range r.mapped {
		if unsafe.SliceData(m) == start {
			unmapPiece(m)
			r.mapped = slices.Delete(r.mapped, i, i+1)
			return true
		}
	}
	return false
}

// release gives back the piece p starts: to the system if it is mapped,
// else to its pool (the first piece may be a hinted buffer from getBig).
func (r *Reader) release(p []byte) {
	if !r.unmap(p) {
		putBig(p)
	}
}

// unmapAll gives back every mapped piece.
func (r *Reader) unmapAll() {
	for _, m := range r.mapped {
		unmapPiece(m)
	}
	clear(r.mapped)
	r.mapped = r.mapped[:0]
}

// join makes a line read in pieces one buffer (its length, or up to an
// eighth more from a pool), giving each mapped piece back as soon as it is
// copied: the line is held about once, not twice.
func (r *Reader) join() {
	if len(r.chunks) == 0 {
		return
	}
	// A pooled buffer, when there is one, is memory the process already
	// holds (it stays in its pool until taken or collected): using it adds
	// nothing, where a new buffer would come on top of it.
	nb := getBig(r.held + len(r.line))
	for _, c := range r.chunks {
		nb = append(nb, c...)
		r.release(c)
	}
	nb = append(nb, r.line...)
	r.release(r.line)
	r.line = nb
	clear(r.chunks)
	r.chunks, r.held = r.chunks[:0], 0
}

func (r *Reader) oversizedEvent(total int, preview []byte) []byte {
	b := r.synth[:0]
	b = append(b, `{"type":"ccproxy","subtype":"oversized_line","bytes":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(r.max), 10)
	b = append(b, `,"preview":`...)
	b = appendJSONString(b, bstr(trimPartialRune(truncateUTF8(preview, previewBytes))))
	b = append(b, '}')
	r.synth = b
	return b
}

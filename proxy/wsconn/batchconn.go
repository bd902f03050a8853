package wsconn

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// BatchBytes bounds the bytes a BatchConn holds before it writes them: a
// batch of queued frames goes out in one write(2) (or writev(2)) of at most
// about this much, instead of one per frame.
const BatchBytes = 64 << 10

// batchBufs recycles the batch buffers, so an idle connection holds none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, BatchBytes); return &b }}

// BatchConn is the network connection under a websocket: the websocket
// library writes each message (and each control frame) to it with a
// Write of its own. Between Begin and Flush — the write pump sending the
// frames it found queued — those writes are gathered in a buffer of at
// most BatchBytes and written together; outside a batch they go straight
// through. A write that would take the buffer over its bound writes the
// buffer and itself at once (writev), so a batch never holds more.
//
// The library serializes its writes; mu orders them with Flush, which the
// write pump calls outside the library (a pong the read pump sends in the
// middle of a batch is gathered in its place). A write error is kept and
// returned by every later Write and by Flush: the frames gathered were
// reported written to the library, so the connection is closed.
type BatchConn struct {
	net.Conn
	wait time.Duration // write deadline of each write of a batch, from its start

	mu       sync.Mutex
	batching bool
	buf      *[]byte // from batchBufs while batching
	err      error
	writes   atomic.Int64 // writes to Conn (syscalls, but for a short write): Writes
}

// write writes bufs to the connection (one writev for several), counted.
func (b *BatchConn) write(bufs ...[]byte) error {
	b.writes.Add(1)
	var err error
	if len(bufs) == 1 {
		_, err = b.Conn.Write(bufs[0])
	} else {
		nb := net.Buffers(bufs)
		_, err = nb.WriteTo(b.Conn)
	}
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

func (b *BatchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if !b.batching {
		if err := b.write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	buf := *b.buf
	if len(buf)+len(p) <= cap(buf) {
		*b.buf = append(buf, p...)
		return len(p), nil
	}
	b.Conn.SetWriteDeadline(time.Now().Add(b.wait))
	var err error
	if len(buf) == 0 {
		err = b.write(p)
	} else {
		err = b.write(buf, p)
	}
	*b.buf = buf[:0]
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// SetWriteDeadline sets the connection's write deadline, except during a
// batch: the websocket library sets one before each frame it writes, but
// a batch writes later, each write with a deadline wait from its start.
func (b *BatchConn) SetWriteDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batching {
		return nil
	}
	return b.Conn.SetWriteDeadline(t)
}

// Begin starts gathering writes.
func (b *BatchConn) Begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// Flush writes what was gathered since Begin and stops gathering. It
// returns the first write error of the connection, if any.
func (b *BatchConn) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	if b.buf == nil {
		return b.err
	}
	if buf := *b.buf; len(buf) > 0 && b.err == nil {
		b.Conn.SetWriteDeadline(time.Now().Add(b.wait))
		b.write(buf)
	}
	*b.buf = (*b.buf)[:0]
	batchBufs.Put(b.buf)
	b.buf = nil
	return b.err
}

// Hijacker is the http.ResponseWriter given to the websocket
// upgrader: its Hijack hands the upgrader the connection wrapped in a
// BatchConn, kept in Conn.
type Hijacker struct {
	http.ResponseWriter
	Wait time.Duration // BatchConn.wait
	Conn *BatchConn    // set by Hijack
}

func (h *Hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.Conn = &BatchConn{Conn: c, wait: h.Wait}
	return h.Conn, brw, nil
}

// Writes returns the writes made to the network connection so far (a
// batch's gathered frames count one).
func (b *BatchConn) Writes() int64 { return b.writes.Load() }

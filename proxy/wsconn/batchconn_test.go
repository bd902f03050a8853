package wsconn

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// recConn is a net.Conn that records each Write (a write(2)) and each
// write deadline set.
type recConn struct {
	net.Conn  // nil: only the methods below are called
	mu        sync.Mutex
	writes    [][]byte
	deadlines int
	fail      error
}

func (r *recConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return 0, r.fail
	}
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recConn) SetWriteDeadline(time.Time) error {
	r.mu.Lock()
	r.deadlines++
	r.mu.Unlock()
	return nil
}

func (r *recConn) all() []byte { return bytes.Join(r.writes, nil) }

func TestBatchConnGathersABatch(t *testing.T) {
	rc := &recConn{}
	b := &BatchConn{Conn: rc, wait: time.Second}

	// Outside a batch a write goes straight through.
	b.Write([]byte("a"))
	if len(rc.writes) != 1 {
		t.Fatalf("outside a batch: %d writes, want 1", len(rc.writes))
	}
	b.Begin()
	var want []byte
	for i := range 100 {
		p := bytes.Repeat([]byte{byte('0' + i%10)}, 100)
		want = append(want, p...)
		b.SetWriteDeadline(time.Now()) // the library's, per frame: ignored
		if n, err := b.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if len(rc.writes) != 1 || rc.deadlines != 0 {
		t.Fatalf("during the batch: %d writes and %d deadlines reached the connection, want none", len(rc.writes)-1, rc.deadlines)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(rc.writes) != 2 || !bytes.Equal(rc.writes[1], want) || rc.deadlines != 1 {
		t.Fatalf("flush: %d writes (want 2, the second the 100 frames in order), %d deadlines (want 1)", len(rc.writes), rc.deadlines)
	}
	if err := b.Flush(); err != nil || len(rc.writes) != 2 {
		t.Fatalf("a second flush wrote again (%d writes) or failed: %v", len(rc.writes), err)
	}
	if b.buf != nil {
		t.Error("the buffer is kept after the batch")
	}
}

// A write that would take the batch over BatchBytes writes what is held
// and itself at once: a batch never holds more than its bound, and the
// bytes stay in order.
func TestBatchConnBound(t *testing.T) {
	rc := &recConn{}
	b := &BatchConn{Conn: rc, wait: time.Second}
	b.Begin()
	small := bytes.Repeat([]byte("s"), BatchBytes-10)
	big := bytes.Repeat([]byte("B"), 3*BatchBytes)
	tail := []byte("tail")
	b.Write(small)
	if len(rc.writes) != 0 {
		t.Fatal("a write within the bound reached the connection")
	}
	b.Write(big)
	if got := len(rc.all()); got != len(small)+len(big) {
		t.Fatalf("over the bound: %d bytes written, want the %d held and the big write", got, len(small)+len(big))
	}
	if b.buf != nil && len(*b.buf) != 0 {
		t.Fatalf("%d bytes still held after writing over the bound", len(*b.buf))
	}
	b.Write(tail)
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join([][]byte{small, big, tail}, nil); !bytes.Equal(rc.all(), want) {
		t.Fatal("bytes out of order")
	}
}

// A write error is kept: later writes and flush return it, and a batch
// that fails is not written again.
func TestBatchConnErrorSticks(t *testing.T) {
	boom := errors.New("boom")
	rc := &recConn{}
	b := &BatchConn{Conn: rc, wait: time.Second}
	b.Begin()
	b.Write([]byte("frame"))
	rc.fail = boom
	if err := b.Flush(); !errors.Is(err, boom) {
		t.Fatalf("flush = %v, want boom", err)
	}
	rc.fail = nil
	if _, err := b.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("Write after a failure = %v, want boom", err)
	}
	b.Begin()
	if err := b.Flush(); !errors.Is(err, boom) || len(rc.writes) != 0 {
		t.Fatalf("flush after a failure = %v with %d writes, want boom and none", err, len(rc.writes))
	}
}

// Another goroutine's write in the middle of a batch (the read pump's pong)
// is gathered in its place; run with -race.
func TestBatchConnConcurrentWrite(t *testing.T) {
	rc := &recConn{}
	b := &BatchConn{Conn: rc, wait: time.Second}
	for range 50 {
		b.Begin()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Write([]byte("P"))
		}()
		for range 10 {
			b.Write([]byte("f"))
		}
		wg.Wait()
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	got := rc.all()
	if len(got) != 50*11 || bytes.Count(got, []byte("P")) != 50 {
		t.Fatalf("wrote %d bytes with %d pongs, want %d with 50", len(got), bytes.Count(got, []byte("P")), 50*11)
	}
}

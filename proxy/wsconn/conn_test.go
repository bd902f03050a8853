package wsconn

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// nopHandler is a Handler for connections that only queue.
type nopHandler struct{}

func (nopHandler) HandleFrame([]byte)            {}
func (nopHandler) Refuse(json.RawMessage, error) {}
func (nopHandler) Closed(error)                  {}

// testSource is a Source that is never gone and has nothing to pull.
type testSource struct{}

func (*testSource) Pull() [][]byte { return nil }
func (*testSource) Gone() bool     { return false }

// lockCheckHandler records, for each record whose message is msg, whether
// the connection's lock was free while it was logged.
type lockCheckHandler struct {
	msg  string
	c    **Conn
	free []bool
}

func (h *lockCheckHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *lockCheckHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lockCheckHandler) WithGroup(string) slog.Handler            { return h }
func (h *lockCheckHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		free := (*h.c).mu.TryLock()
		if free {
			(*h.c).mu.Unlock()
		}
		h.free = append(h.free, free)
	}
	return nil
}

// Dropping a slow client is logged at once, without the connection's lock
// held (Kill runs with a session's lock held already), and once.
func TestKillLogsWithoutTheLock(t *testing.T) {
	var c *Conn
	h := &lockCheckHandler{msg: "dropping websocket client", c: &c}
	c = New(nil, Config{Log: slog.New(h), QueueFrames: 1}, nopHandler{})
	c.Kill(websocket.ClosePolicyViolation, "slow consumer: send queue full (1 frames)")
	c.Kill(websocket.ClosePolicyViolation, "slow consumer: send queue full (1 frames)")
	if len(h.free) != 1 || !h.free[0] {
		t.Errorf("drop logged %d times, with the lock free: %v; want once, free", len(h.free), h.free)
	}
}

// The frames the write pump has taken and not finished writing count
// against the send queue's bounds: a pump stuck writing a batch to a client
// that stopped reading does not let the queue take a bound's worth more.
// Once they are written, the queue takes frames again.
func TestQueueBoundsCountFramesInHand(t *testing.T) {
	c := New(nil, Config{Log: slog.New(slog.DiscardHandler), QueueFrames: 4, QueueBytes: 1 << 20}, nopHandler{})
	sub := &testSource{}
	event := Frame{Data: []byte(`{"type":"session/event"}`), Src: sub}
	for i := range 4 {
		if got := c.EnqueueEvent(event); got != Queued {
			t.Fatalf("event %d into a queue of 4: %d, want queued", i, got)
		}
	}
	batch, _ := c.take(nil, maxBatchFrames, nil) // the pump takes them all, and is then stuck writing
	if len(batch) != 4 {
		t.Fatalf("took %d frames, want 4", len(batch))
	}
	if got := c.EnqueueEvent(event); got != QueueBehind {
		t.Fatalf("an event while the pump holds 4 frames (the bound): %d, want queueBehind", got)
	}
	c.mu.Lock()
	held, catchup := c.qBytes, len(c.catchup)
	c.mu.Unlock()
	if held != int64(4*len(event.Data)) || catchup != 1 {
		t.Errorf("with 4 frames in hand: %d bytes held, %d catching up; want %d, 1", held, catchup, 4*len(event.Data))
	}
	more, _ := c.take(batch[:0], maxBatchFrames, batch) // written: nothing more queued
	if len(more) != 0 {
		t.Fatalf("took %d more frames, want none", len(more))
	}
	if got := c.EnqueueEvent(event); got != Queued {
		t.Errorf("an event once the batch is written: %d, want queued", got)
	}
	_, _, sent, sentBytes := c.Counts()
	if sent != 4 || sentBytes != int64(4*len(event.Data)) {
		t.Errorf("metrics count %d frames, %d bytes sent; want 4, %d", sent, sentBytes, 4*len(event.Data))
	}
}

// recorder is a Handler that keeps the frames it is handed.
type recorder struct {
	frames chan string
	closed chan struct{}
}

func (r *recorder) HandleFrame(data []byte)       { r.frames <- string(data) }
func (r *recorder) Refuse(json.RawMessage, error) {}
func (r *recorder) Closed(error)                  { close(r.closed) }

// Close sends what is queued, then 1001 with Config.GoingAway, and
// returns once both pumps have ended; a second Close returns at once, and
// Close on a Conn that never ran returns at once.
func TestCloseFlushesAndWaits(t *testing.T) {
	if err := New(nil, Config{}, nopHandler{}).Close(context.Background()); err != nil {
		t.Fatalf("Close of a Conn never run: %v", err)
	}
	conns := make(chan *Conn, 1)
	rec := &recorder{frames: make(chan string, 1), closed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &Hijacker{ResponseWriter: w, Wait: time.Second}
		ws, err := (&websocket.Upgrader{}).Upgrade(hj, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		c := New(ws, Config{Batch: hj.Conn, Inbound: NewBudget(1 << 20), MaxFrameBytes: 1 << 16, QueueFrames: 8, QueueBytes: 1 << 20,
			PingInterval: time.Hour, PongWait: time.Hour, WriteWait: time.Second, GoingAway: "going away"}, rec)
		conns <- c
		c.Run()
	}))
	defer srv.Close()
	peer, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c := <-conns
	if err := peer.WriteMessage(websocket.TextMessage, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := <-rec.frames; got != "hello" {
		t.Fatalf("handled %q", got)
	}
	c.Enqueue(Frame{Data: []byte("one")})
	c.Enqueue(Frame{Data: []byte("two")})
	closed := make(chan error, 1)
	go func() { closed <- c.Close(context.Background()) }()
	for _, want := range []string{"one", "two"} {
		_, got, err := peer.ReadMessage()
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	_, _, err = peer.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseGoingAway || ce.Text != "going away" {
		t.Fatalf("after the queue: %v, want close 1001 going away", err)
	}
	peer.Close() // the read pump ends
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after both pumps ended")
	}
	<-rec.closed
	if err := c.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

package wsconn

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

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

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// fakeConn records the replies of one connection.
type fakeConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	replies map[string]error // by id: nil for a reply with data
}

func newConn() *fakeConn {
	c := &fakeConn{replies: map[string]error{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

func (c *fakeConn) Context() context.Context { return c.ctx }
func (c *fakeConn) Go(f func())              { c.wg.Go(f) }
func (c *fakeConn) Log() *slog.Logger        { return slog.New(slog.DiscardHandler) }
func (c *fakeConn) Reply(id json.RawMessage, _ protocol.Data) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replies[string(id)] = nil
}

func (c *fakeConn) ReplyErr(id json.RawMessage, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replies[string(id)] = err
}

func (c *fakeConn) reply(t *testing.T, id string) (error, bool) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	err, ok := c.replies[id]
	return err, ok
}

func code(err error) protocol.Code {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// The limit, shutting_down for running and later requests, no reply to a
// connection that is gone, and an idempotent Close that waits for the
// replies.
func TestRunnerLimitShutdownClose(t *testing.T) {
	r := New(2, "things", func(_ *slog.Logger, typ string, err error) error {
		return protocol.Errorf(protocol.CodeInternal, "%s: %v", typ, err)
	})
	started := make(chan struct{}, 4)
	r.SetRunning(func(context.Context, string) { started <- struct{}{} })
	block := func(ctx context.Context) (protocol.Data, error) { <-ctx.Done(); return nil, ctx.Err() }
	a, gone := newConn(), newConn()
	r.Run(a, json.RawMessage(`1`), "t/a", block)
	r.Run(gone, json.RawMessage(`2`), "t/b", block)
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the requests did not start")
		}
	}
	r.Run(a, json.RawMessage(`3`), "t/c", block)
	if err, ok := a.reply(t, "3"); !ok || code(err) != protocol.CodeLimitExceeded || err.Error() != "limit_exceeded: t/c: 2 things are running; wait for one to finish" {
		t.Errorf("beyond the limit: %v, %v", err, ok)
	}
	gone.cancel()
	gone.wg.Wait()
	if _, ok := gone.reply(t, "2"); ok {
		t.Error("a request of a connection that is gone was answered")
	}
	for range 2 { // idempotent
		if err := r.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err, ok := a.reply(t, "1"); !ok || code(err) != protocol.CodeShuttingDown {
		t.Errorf("running at Close: %v, %v", err, ok)
	}
	r.Run(a, json.RawMessage(`4`), "t/d", func(context.Context) (protocol.Data, error) {
		t.Error("ran after Close")
		return nil, nil
	})
	if err, ok := a.reply(t, "4"); !ok || code(err) != protocol.CodeShuttingDown || err.Error() != "shutting_down: t/d: ccproxy is shutting down" {
		t.Errorf("after Close: %v, %v", err, ok)
	}
	a.wg.Wait()
}

// Close returns ctx's error when a request does not end in time, and
// succeeds once it has.
func TestRunnerCloseDeadline(t *testing.T) {
	r := New(1, "things", nil)
	release := make(chan struct{})
	c := newConn()
	r.Run(c, json.RawMessage(`1`), "t", func(context.Context) (protocol.Data, error) { <-release; return protocol.Empty{}, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a request that does not end: %v", err)
	}
	close(release)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.reply(t, "1"); !ok {
		t.Error("no reply")
	}
	c.wg.Wait()
}

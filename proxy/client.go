package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// client is one websocket connection.
//
// Goroutines: the read pump runs in the HTTP handler's goroutine and owns
// the connection's lifetime; it starts the write pump — the only writer of
// the connection — and the goroutines of slow requests (tracked by reqWG),
// and joins them all before the handler returns.
//
// Frames reach the write pump through send, a bounded queue. Whoever
// queues never waits: when the queue is full the client is dropped with
// close code 1008 (kill). A subscription that is catching up is not fed
// through the queue: the write pump pulls its frames from the session's
// replay log, so a replay of any length never overflows the queue.
type client struct {
	srv  *Server
	id   string
	conn *websocket.Conn
	log  *slog.Logger

	send     chan outFrame
	wake     chan struct{} // (cap 1) a subscription started catching up
	killed   chan struct{} // closed by kill: close with killCode, drop the queue
	closing  chan struct{} // closed by closeGracefully: flush the queue, close 1001
	readDone chan struct{} // closed when the read pump returns
	pumpDone chan struct{} // closed when the write pump returns

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc
	reqWG  sync.WaitGroup

	mu         sync.Mutex
	dead       bool
	killCode   int
	killReason string
	closeOnce  sync.Once
	subs       map[*Session]*subscription
	catchup    []*subscription
	readBuf    bytes.Buffer
}

func newClient(srv *Server, id string, conn *websocket.Conn) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		srv:      srv,
		id:       id,
		conn:     conn,
		log:      srv.log.With("conn", id),
		send:     make(chan outFrame, srv.opts.SendQueueFrames),
		wake:     make(chan struct{}, 1),
		killed:   make(chan struct{}),
		closing:  make(chan struct{}),
		readDone: make(chan struct{}),
		pumpDone: make(chan struct{}),
		ctx:      ctx,
		cancel:   cancel,
		subs:     map[*Session]*subscription{},
	}
}

// enqueue queues a frame without ever waiting. When the queue is full the
// client is dropped (slow consumer) and false is returned. Safe to call
// with a session's lock held (lock order: server, session, hub → client).
func (c *client) enqueue(f outFrame) bool {
	select {
	case <-c.killed:
		return false
	default:
	}
	select {
	case c.send <- f:
		return true
	default:
		c.kill(websocket.ClosePolicyViolation, fmt.Sprintf("slow consumer: send queue full (%d frames)", cap(c.send)))
		return false
	}
}

// kill drops the client: the write pump discards its queue, sends a close
// frame with code and reason, and closes the connection. The drop is
// logged at once (the write pump may be stuck in a write to this very
// client until WriteWait), once the client's lock is released.
func (c *client) kill(code int, reason string) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead, c.killCode, c.killReason = true, code, reason
	close(c.killed)
	c.mu.Unlock()
	if code == websocket.ClosePolicyViolation {
		c.log.Warn("dropping websocket client", "code", code, "reason", reason)
	}
}

// closeGracefully has the write pump send what is queued, then a close
// frame (1001, shutting down).
func (c *client) closeGracefully() { c.closeOnce.Do(func() { close(c.closing) }) }

func (c *client) addSub(sub *subscription) {
	c.mu.Lock()
	c.subs[sub.s] = sub
	c.catchup = append(c.catchup, sub)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// dropSub forgets sub (unsubscribed, replaced or its session closed).
func (c *client) dropSub(sub *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs[sub.s] == sub {
		delete(c.subs, sub.s)
	}
	c.removeCatchupLocked(sub)
}

func (c *client) catchupDone(sub *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeCatchupLocked(sub)
}

func (c *client) removeCatchupLocked(sub *subscription) {
	for i, s := range c.catchup {
		if s == sub {
			c.catchup = append(c.catchup[:i], c.catchup[i+1:]...)
			return
		}
	}
}

func (c *client) nextCatchup() *subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.catchup) == 0 {
		return nil
	}
	// Round robin between sessions catching up.
	sub := c.catchup[0]
	c.catchup = append(c.catchup[1:], sub)
	return sub
}

// reply queues a success reply.
func (c *client) reply(id json.RawMessage, data protocol.Data) {
	b, err := encodeReply(id, data)
	if err != nil {
		c.log.Error("reply cannot be encoded", "err", err)
		b = encodeError(id, protocol.Errorf(protocol.CodeInternal, "internal error"))
	}
	c.enqueue(outFrame{data: b})
}

// replyErr queues an error reply; errors that are not *protocol.Error are
// logged and sent as internal.
func (c *client) replyErr(id json.RawMessage, err error) {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		c.log.Error("request failed", "err", err)
	}
	c.enqueue(outFrame{data: encodeError(id, err)})
}

// async runs the slow part of a request in a goroutine owned by the
// connection, so later requests are not held up.
func (c *client) async(f func()) {
	c.reqWG.Add(1)
	go func() {
		defer c.reqWG.Done()
		f()
	}()
}

// serve runs the connection until the peer goes away, the client is
// dropped or the server shuts down, and cleans up after it.
func (c *client) serve() {
	go c.writePump()
	c.readPump()
	c.cancel()
	<-c.pumpDone
	c.reqWG.Wait()
	c.mu.Lock()
	subs := make([]*subscription, 0, len(c.subs))
	for _, sub := range c.subs {
		subs = append(subs, sub)
	}
	c.mu.Unlock()
	for _, sub := range subs {
		sub.s.unsubscribe(c)
	}
	c.srv.mcp.unsubscribe(c)
	c.srv.removeClient(c)
}

// readPump reads frames until the connection fails. A frame larger than
// MaxFrameBytes is read to its end without being kept and answered with
// frame_too_large; the connection stays open.
func (c *client) readPump() {
	defer close(c.readDone)
	pongWait := c.srv.opts.PongWait
	c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		return nil
	})
	max := c.srv.opts.MaxFrameBytes
	for {
		mt, r, err := c.conn.NextReader()
		if err != nil {
			c.log.Debug("websocket read ended", "err", err)
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		c.readBuf.Reset()
		n, err := io.Copy(&c.readBuf, io.LimitReader(r, max+1))
		if err != nil {
			c.log.Debug("websocket read failed", "err", err)
			return
		}
		if n > max {
			rest, err := io.Copy(io.Discard, r)
			if err != nil {
				return
			}
			c.readBuf.Reset()
			c.replyErr(protocol.Null, protocol.Errorf(protocol.CodeFrameTooLarge,
				"frame of %d bytes is larger than limits.maxFrameBytes (%d); it was discarded", n+rest, max))
			continue
		}
		if mt != websocket.TextMessage {
			c.replyErr(protocol.Null, protocol.Errorf(protocol.CodeBadRequest, "binary frames are not accepted: send each request as a JSON text frame"))
			continue
		}
		c.srv.handleFrame(c, c.readBuf.Bytes())
		if c.readBuf.Cap() > 1<<20 {
			c.readBuf = bytes.Buffer{} // do not keep a large buffer around
		}
		select {
		case <-c.killed:
			return
		default:
		}
	}
}

// writePump is the only writer of the connection: queued frames first,
// then catch-up pulls, with a ping every PingInterval. It closes the
// connection when it returns, which ends the read pump.
func (c *client) writePump() {
	defer close(c.pumpDone)
	defer c.conn.Close()
	ping := time.NewTicker(c.srv.opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.killed:
			c.writeClose(c.killCode, c.killReason)
			return
		default:
		}
		select {
		case f := <-c.send:
			if !c.write(f) {
				return
			}
			continue
		default:
		}
		if sub := c.nextCatchup(); sub != nil {
			for _, f := range sub.s.pull(sub) {
				if !c.write(outFrame{data: f, sub: sub}) {
					return
				}
			}
			continue
		}
		select {
		case <-c.killed:
			c.writeClose(c.killCode, c.killReason)
			return
		case <-c.closing:
			for {
				select {
				case f := <-c.send:
					if !c.write(f) {
						return
					}
					continue
				default:
				}
				break
			}
			c.writeClose(websocket.CloseGoingAway, "ccproxy is shutting down")
			return
		case <-c.readDone:
			return
		case f := <-c.send:
			if !c.write(f) {
				return
			}
		case <-c.wake:
		case <-ping.C:
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.opts.WriteWait)); err != nil {
				return
			}
		}
	}
}

func (c *client) write(f outFrame) bool {
	if f.sub != nil && f.sub.gone.Load() {
		return true
	}
	select {
	case <-c.killed:
		return true // dropped: the loop sends the close frame next
	default:
	}
	c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteWait))
	if err := c.conn.WriteMessage(websocket.TextMessage, f.data); err != nil {
		c.log.Debug("websocket write failed", "err", err)
		return false
	}
	return true
}

func (c *client) writeClose(code int, reason string) {
	if len(reason) > 123 {
		reason = reason[:123]
	}
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(c.srv.opts.WriteWait))
}

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/proxy/wsconn"

	"github.com/ccproxy/ccproxy/protocol"
)

// client is one websocket connection.
//
// Goroutines: the read pump runs in the HTTP handler's goroutine and owns
// the connection's lifetime; it starts the write pump — the only writer of
// the connection — and the goroutines of slow requests (tracked by reqWG),
// and joins them all before the handler returns.
//
// Frames reach the write pump through a queue bounded by bytes
// (SendQueueBytes) and frames (SendQueueFrames), counting the frames the
// pump has taken and not yet handed to the connection (what wsconn.BatchConn
// gathers, at most wsconn.BatchBytes, is not counted). Whoever queues never
// waits. An event that does not fit is not queued: its subscription goes
// back to catching up (the hub), and the write pump pulls the events from
// the session's log once the queue is empty, so a client that keeps
// reading never loses an event and a replay of any length never fills the
// queue. Other frames (replies, pushes) get twice the bound; beyond
// it the client is dropped with close code 1008. (Pushes to a subscription
// that is behind are not queued: the hub keeps them, in their place among
// the events, and the pump pulls them with the events.) A client whose write
// makes no progress for WriteWait is closed.
//
// mu guards the queue, dead/kill*, subs and catchup; it is the last lock
// in the order (server, session, hub, client).
type client struct {
	srv  *Server
	id   string
	conn *websocket.Conn
	log  *slog.Logger
	// batch is conn's network connection, which gathers the writes of a
	// batch (nil in tests that build a client without a connection).
	batch *wsconn.BatchConn

	wake     chan struct{} // (cap 1) a frame was queued or a subscription started catching up
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
	queue      []outFrame // queue[qHead:] waits for the write pump
	qHead      int
	inHand     int      // frames the pump took (take) and has not finished writing
	qBytes     int64    // bytes of the queued frames and of those in hand
	ws         wsCounts // metrics.go: frames and bytes in and out
}

func newClient(srv *Server, id string, conn *websocket.Conn) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		srv:      srv,
		id:       id,
		conn:     conn,
		log:      srv.log.With("conn", id),
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

// What queueFrame did.
const (
	queued      = iota
	queueBehind // an event did not fit: f.sub is now catching up
	queueDead   // the client is gone (or was dropped now)
)

// enqueue queues a frame that is not an event (a reply, a push) without
// ever waiting; see queueFrame. It reports whether the frame was queued.
// Safe to call with a session's or hub's lock held (lock order: server,
// session, hub → client).
func (c *client) enqueue(f outFrame) bool { return c.queueFrame(f, false) == queued }

// enqueueEvent queues the event frame of a live subscription; see
// queueFrame. The caller (the hub, under its lock) marks the subscription
// not live when it returns queueBehind.
func (c *client) enqueueEvent(f outFrame) int { return c.queueFrame(f, true) }

// queueFrame queues f without ever waiting, within the queue's bounds
// (SendQueueFrames, SendQueueBytes; an empty queue, with nothing in the
// pump's hands, takes any frame). An
// event that does not fit is not queued: its subscription goes on the
// catch-up list, and the write pump will pull that event and the following
// ones from the log once the queue is empty. Other frames may take the
// queue to twice its bounds; beyond that the client is dropped (slow
// consumer).
func (c *client) queueFrame(f outFrame, event bool) int {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return queueDead
	}
	maxFrames, maxBytes := c.srv.opts.SendQueueFrames, c.srv.opts.SendQueueBytes
	if !event {
		maxFrames, maxBytes = 2*maxFrames, 2*maxBytes
	}
	// The frames the pump has in hand count: a pump stuck in a write to a
	// client that stopped reading holds a batch of them.
	if n := len(c.queue) - c.qHead + c.inHand; n > 0 && (n >= maxFrames || c.qBytes+int64(len(f.data)) > maxBytes) {
		if event {
			c.catchup = append(c.catchup, f.sub)
			c.mu.Unlock()
			c.signal()
			return queueBehind
		}
		held := c.qBytes
		c.mu.Unlock()
		c.srv.metrics.clientDropped(dropQueueFull)
		c.kill(websocket.ClosePolicyViolation, fmt.Sprintf("slow consumer: send queue full (%d frames, %d bytes)", n, held))
		return queueDead
	}
	c.pushLocked(f)
	c.mu.Unlock()
	c.signal()
	return queued
}

func (c *client) pushLocked(f outFrame) {
	if c.qHead > 64 && c.qHead > len(c.queue)/2 {
		n := copy(c.queue, c.queue[c.qHead:])
		clear(c.queue[n:])
		c.queue, c.qHead = c.queue[:n], 0
	}
	c.queue = append(c.queue, f)
	c.qBytes += int64(len(f.data))
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// take returns what the write pump does next: the queued frames, at most
// max, appended to dst in order; else a subscription to pull for (round
// robin between sessions catching up); else nothing (dst unchanged, nil).
// Catching up waits for an empty queue, so the frames of a subscription
// that fell behind, queued before, go out first. The frames are taken
// under one lock, not one each: the hub queues to the client under the
// same lock, from the session's goroutine, as fast as the pump takes.
// Taken frames stay within the queue's bounds (inHand) until the pump
// says they are written: written, the frames of its last take, which dst
// may reuse the array of.
func (c *client) take(dst []outFrame, max int, written []outFrame) ([]outFrame, *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writtenLocked(written)
	if n := min(len(c.queue)-c.qHead, max); n > 0 {
		batch := c.queue[c.qHead : c.qHead+n]
		c.inHand += n
		dst = append(dst, batch...)
		clear(batch)
		c.qHead += n
		if c.qHead == len(c.queue) {
			c.queue, c.qHead = c.queue[:0], 0
			if cap(c.queue) > 4096 {
				c.queue = nil
			}
		}
		return dst, nil
	}
	if len(c.catchup) == 0 {
		return dst, nil
	}
	sub := c.catchup[0]
	c.catchup = append(c.catchup[1:], sub)
	return dst, sub
}

// writtenLocked counts frames of a take as written: out of the queue's
// bounds, into the metrics.
func (c *client) writtenLocked(frames []outFrame) {
	var n int64
	for i, f := range frames {
		n += int64(len(f.data))
		frames[i] = outFrame{} // the pump's batch array holds no frame it has written
	}
	c.inHand -= len(frames)
	c.qBytes -= n
	c.ws.sentLocked(len(frames), n)
}

// written is writtenLocked for the frames of a batch's last take.
func (c *client) written(frames []outFrame) {
	if len(frames) == 0 {
		return
	}
	c.mu.Lock()
	c.writtenLocked(frames)
	c.mu.Unlock()
}

// dropQueue forgets the queued frames and those in hand (the client is
// dropped; only the write pump calls it, between batches).
func (c *client) dropQueue() {
	c.mu.Lock()
	c.queue, c.qHead, c.inHand, c.qBytes = nil, 0, 0, 0
	c.mu.Unlock()
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
	c.signal()
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
	c.srv.mcp.Unsubscribe(mcpSubscriber{c})
	c.srv.removeClient(c)
}

// readPump reads frames until the connection fails. A frame larger than
// MaxFrameBytes is read to its end without being kept and answered with
// frame_too_large, echoing the frame's id when its first wsconn.FrameHeadBytes show
// it (else null); the connection stays open. The memory frames take
// while they are read and handled comes from the server's inbound budget
// (InboundBytes, all connections): a frame that would exceed it is read
// to its end without being kept and refused with limit_exceeded (never
// waited for: connections holding parts of the budget could wait for each
// other forever).
func (c *client) readPump() {
	defer close(c.readDone)
	pongWait := c.srv.opts.PongWait
	c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		return nil
	})
	max := c.srv.opts.MaxFrameBytes
	var buf []byte
	for {
		mt, r, err := c.conn.NextReader()
		if err != nil {
			c.readError(err)
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		var held int64 // inbound budget taken for this frame
		data, status, err := wsconn.ReadFrame(r, buf[:0], max, func(grow int64) bool {
			if !c.srv.inbound.TryAcquire(grow) {
				return false
			}
			held += grow
			return true
		})
		if err != nil {
			c.srv.inbound.Release(held)
			c.readError(err)
			return
		}
		c.ws.received(status.Size)
		switch {
		case status.TooLarge:
			c.replyErr(status.ID, protocol.Errorf(protocol.CodeFrameTooLarge,
				"frame of %d bytes is larger than limits.maxFrameBytes (%d); it was discarded", status.Size, max))
		case status.Refused:
			c.replyErr(status.ID, protocol.Errorf(protocol.CodeLimitExceeded,
				"frame of %d bytes refused: ccproxy is reading and handling other large frames (at most %d bytes at once, all connections); it was discarded, send it again later", status.Size, c.srv.opts.InboundBytes))
		case mt != websocket.TextMessage:
			c.replyErr(protocol.Null, protocol.Errorf(protocol.CodeBadRequest, "binary frames are not accepted: send each request as a JSON text frame"))
		default:
			c.srv.handleFrame(c, data)
		}
		// Keep a small buffer for the next frame; a large one goes back
		// to the budget and the garbage collector.
		buf = data
		if cap(buf) > 64<<10 {
			buf = nil
		}
		c.srv.inbound.Release(held)
		select {
		case <-c.killed:
			return
		default:
		}
	}
}

// readError reports the failed read that ends the read pump. Nothing
// read for PongWait (no frame, no pong) drops the client: logged as a WARN
// with its reason and bound, as the write pump's drops are; any other
// failure is the client going away (debug).
func (c *client) readError(err error) {
	c.srv.metrics.readFailed(err)
	if isTimeout(err) {
		c.log.Warn("dropping websocket client", "reason",
			fmt.Sprintf("no frame or pong for %s (pong timeout); closed without a close frame", c.srv.opts.PongWait))
		return
	}
	c.log.Debug("websocket read ended", "err", err)
}

// writePump is the only writer of the connection: queued frames first,
// then catch-up pulls, with a ping every PingInterval. It closes the
// connection when it returns, which ends the read pump.
func (c *client) writePump() {
	defer close(c.pumpDone)
	defer c.conn.Close()
	ping := time.NewTicker(c.srv.opts.PingInterval)
	defer ping.Stop()
	batch := make([]outFrame, 0, maxBatchFrames) // what take took, reused
	for {
		select {
		case <-c.killed:
			c.dropQueue()
			c.writeClose(c.killCode, c.killReason)
			return
		default:
		}
		if frames, sub := c.take(batch[:0], maxBatchFrames, nil); len(frames) > 0 || sub != nil {
			if !c.writeBatch(frames, sub) {
				return
			}
			continue
		}
		select {
		case <-c.killed:
			c.dropQueue()
			c.writeClose(c.killCode, c.killReason)
			return
		case <-c.closing:
			var frames []outFrame
			for {
				if frames, _ = c.take(batch[:0], maxBatchFrames, frames); len(frames) == 0 {
					break
				}
				for _, f := range frames {
					c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteWait))
					if !c.write(f) {
						return
					}
				}
			}
			c.writeClose(websocket.CloseGoingAway, "ccproxy is shutting down")
			return
		case <-c.readDone:
			return
		case <-c.wake:
		case <-ping.C:
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.opts.WriteWait)); err != nil {
				c.writeError(err)
				return
			}
		}
	}
}

// writeBatch writes frames (or, for a subscription catching up, the
// frames pulled from its log) and whatever else is queued, up to
// maxBatchFrames frames or pulls, gathered by the connection into as few
// writes as its bound allows (wsconn.BatchConn), so a burst of frames costs a few
// syscalls instead of one per frame. Nothing waits for frames to arrive:
// a batch is what was already queued, so it adds no latency. frames' array
// (of capacity maxBatchFrames) is reused for what is taken next.
func (c *client) writeBatch(frames []outFrame, sub *subscription) bool {
	if c.batch != nil {
		c.batch.Begin()
	} else {
		c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteWait))
	}
	for n := 0; ; {
		var written []outFrame
		if sub == nil {
			for _, f := range frames {
				if !c.write(f) {
					return false
				}
			}
			n += len(frames)
			written = frames
		} else {
			pulled := sub.s.pull(sub)
			c.countPulled(pulled)
			for _, f := range pulled {
				if !c.write(outFrame{data: f, sub: sub}) {
					return false
				}
			}
			n++
		}
		if n >= maxBatchFrames {
			c.written(written)
			break
		}
		if frames, sub = c.take(frames[:0], maxBatchFrames-n, written); len(frames) == 0 && sub == nil {
			break
		}
	}
	if c.batch == nil {
		return true
	}
	if err := c.batch.Flush(); err != nil {
		c.writeError(err)
		return false
	}
	return true
}

// maxBatchFrames bounds the frames (or catch-up pulls) of one batch, so
// the pump gets back to its loop — a kill, a ping — under a steady stream.
const maxBatchFrames = 256

func (c *client) write(f outFrame) bool {
	if f.sub != nil && f.sub.gone.Load() {
		return true
	}
	select {
	case <-c.killed:
		return true // dropped: the loop sends the close frame next
	default:
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, f.data); err != nil {
		c.writeError(err)
		return false
	}
	return true
}

// writeError reports a failed write of the write pump, which then closes
// the connection. A write that made no progress for WriteWait drops a slow
// client: logged as a WARN with its reason and bound, as a full queue's
// drop is (kill); any other failure is the client going away (debug).
func (c *client) writeError(err error) {
	c.writeFailed(err)
	select {
	case <-c.killed: // dropped already, and logged then
		c.log.Debug("websocket write failed", "err", err)
		return
	default:
	}
	if isTimeout(err) {
		c.log.Warn("dropping websocket client", "reason",
			fmt.Sprintf("slow consumer: its connection accepted nothing for %s (write timeout); closed without a close frame", c.srv.opts.WriteWait))
		return
	}
	c.log.Debug("websocket write failed", "err", err)
}

func (c *client) writeClose(code int, reason string) {
	if len(reason) > 123 {
		reason = reason[:123]
	}
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(c.srv.opts.WriteWait))
}

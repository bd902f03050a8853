package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/proxy/wsconn"

	"github.com/ccproxy/ccproxy/protocol"
)

// client is one websocket connection as the protocol sees it: the hello,
// the requests it sends (handleFrame, through the feature table), their
// replies and the slow parts of some (async), its subscriptions to
// sessions. The connection itself — the read pump, the write pump, the
// send queue and its bounds, the catch-up list — is a wsconn.Conn, which
// hands the client the frames it reads (the client is its Handler).
//
// Goroutines: the connection's (wsconn.Conn.Run, on the HTTP handler's
// goroutine) and the goroutines of slow requests (async, tracked by
// reqWG), which serve joins once the connection has ended.
//
// Events of a subscription reach the connection as frames of a
// wsconn.Source (the subscription): one that does not fit the send queue
// is not queued, the subscription goes back to catching up (the hub), and
// the write pump pulls the events from the session's log once the queue
// is empty. (Pushes to a subscription that is behind are not queued: the
// hub keeps them, in their place among the events, and the pump pulls
// them with the events.)
//
// mu guards subs; it is taken after a hub's lock (lock order: server,
// session, hub, client), and the connection's lock (a leaf) after it.
type client struct {
	srv  *Server
	id   string
	log  *slog.Logger
	conn *wsconn.Conn

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc
	reqWG  sync.WaitGroup

	mu   sync.Mutex
	subs map[*Session]*subscription
}

// newClient is the client of ws, whose network connection is batch (nil
// for both in tests that only queue).
func newClient(srv *Server, id string, ws *websocket.Conn, batch *wsconn.BatchConn) *client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{
		srv:    srv,
		id:     id,
		log:    srv.log.With("conn", id),
		ctx:    ctx,
		cancel: cancel,
		subs:   map[*Session]*subscription{},
	}
	c.conn = wsconn.New(ws, wsconn.Config{
		Log:           c.log,
		Batch:         batch,
		Inbound:       srv.inbound,
		MaxFrameBytes: srv.opts.MaxFrameBytes,
		QueueFrames:   srv.opts.SendQueueFrames,
		QueueBytes:    srv.opts.SendQueueBytes,
		PingInterval:  srv.opts.PingInterval,
		PongWait:      srv.opts.PongWait,
		WriteWait:     srv.opts.WriteWait,
		GoingAway:     "ccproxy is shutting down",
		Dropped:       srv.metrics.ClientDropped,
	}, c)
	return c
}

// What enqueueEvent did.
const (
	queued      = wsconn.Queued
	queueBehind = wsconn.QueueBehind // an event did not fit: f.sub is now catching up
	queueDead   = wsconn.QueueDead   // the client is gone (or was dropped now)
)

// frame is f as the connection queues it.
func (f outFrame) frame() wsconn.Frame {
	if f.sub == nil {
		return wsconn.Frame{Data: f.data}
	}
	return wsconn.Frame{Data: f.data, Src: f.sub}
}

// enqueue queues a frame that is not an event (a reply, a push) without
// ever waiting (wsconn.Conn.Enqueue). It reports whether the frame was
// queued. Safe to call with a session's or hub's lock held.
func (c *client) enqueue(f outFrame) bool { return c.conn.Enqueue(f.frame()) }

// enqueueEvent queues the event frame of a live subscription
// (wsconn.Conn.EnqueueEvent). The caller (the hub, under its lock) marks
// the subscription not live when it returns queueBehind: the connection
// has put it on its catch-up list.
func (c *client) enqueueEvent(f outFrame) int { return c.conn.EnqueueEvent(f.frame()) }

// kill drops the client: close code and reason (wsconn.Conn.Kill).
func (c *client) kill(code int, reason string) { c.conn.Kill(code, reason) }

// closeGracefully has the write pump send what is queued, then a close
// frame (1001, shutting down).
func (c *client) closeGracefully() { c.conn.CloseGracefully() }

func (c *client) addSub(sub *subscription) {
	c.mu.Lock()
	c.subs[sub.s] = sub
	c.mu.Unlock()
	c.conn.CatchUp(sub)
}

// dropSub forgets sub (unsubscribed, replaced or its session closed).
func (c *client) dropSub(sub *subscription) {
	c.mu.Lock()
	if c.subs[sub.s] == sub {
		delete(c.subs, sub.s)
	}
	c.mu.Unlock()
	c.conn.StopCatchUp(sub)
}

func (c *client) catchupDone(sub *subscription) { c.conn.StopCatchUp(sub) }

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
	c.conn.Run() // Closed cancels c.ctx when the read pump ends
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

// HandleFrame handles a request frame (wsconn.Handler), on the read pump.
func (c *client) HandleFrame(data []byte) { c.srv.handleFrame(c, data) }

// Refuse answers a frame the read pump refused (wsconn.Handler).
func (c *client) Refuse(id json.RawMessage, err error) { c.replyErr(id, err) }

// Closed cancels the connection's requests once its read pump has ended
// (wsconn.Handler).
func (c *client) Closed(error) { c.cancel() }

// Context, Go, Reply, ReplyErr and Log make the connection a runner.Conn,
// the connection of the feature table's handlers (proxy/feature) and of
// the runners' requests (proxy/runner).
func (c *client) Context() context.Context                  { return c.ctx }
func (c *client) Go(f func())                               { c.async(f) }
func (c *client) Reply(id json.RawMessage, d protocol.Data) { c.reply(id, d) }
func (c *client) ReplyErr(id json.RawMessage, err error)    { c.replyErr(id, err) }
func (c *client) Log() *slog.Logger                         { return c.log }

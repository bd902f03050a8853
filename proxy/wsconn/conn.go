package wsconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
)

// Frame is one frame queued for the peer. Src, when set, is the Source
// the frame belongs to: the frame is dropped if Src is gone before the
// frame is written.
type Frame struct {
	Data []byte
	Src  Source
}

// Source is a stream of frames that can fall behind the queue: when one of
// its frames does not fit (EnqueueEvent), or it starts (CatchUp), the write
// pump pulls its frames itself once the queue is empty, until the Source
// says it is caught up (StopCatchUp).
//
// Both are called by the write pump only, with no lock of the Conn held.
type Source interface {
	// Pull returns the next frames of a source that is catching up.
	Pull() [][]byte
	// Gone reports that the source ended: its queued frames are dropped.
	Gone() bool
}

// Handler is what a Conn hands the frames it reads to. Its methods run on
// the read pump (Run's goroutine), one at a time.
type Handler interface {
	// HandleFrame handles a text frame; data is valid during the call only.
	HandleFrame(data []byte)
	// Refuse answers a frame the read pump did not take (too large, over
	// the inbound budget, binary) with err; id is the frame's, when its
	// first bytes show it, else protocol.Null.
	Refuse(id json.RawMessage, err error)
	// Closed is called once, when the read pump has ended (err: why):
	// the connection takes no more frames, the write pump may still be
	// finishing. The handler stops its own work.
	Closed(err error)
}

// Why a connection was dropped (Config.Dropped).
const (
	DropQueueFull    = "send_queue_full" // its queue of replies and pushes was twice over its bound: closed 1008
	DropWriteTimeout = "write_timeout"   // a write made no progress for WriteWait
	DropPongTimeout  = "pong_timeout"    // nothing read (not even a pong) for PongWait
)

// Config is a connection's limits, timers and reporting.
type Config struct {
	Log     *slog.Logger
	Batch   *BatchConn // the network connection under the websocket (Hijacker.Conn); nil: writes are not batched
	Inbound *Budget    // the memory of frames being read and handled, all connections

	MaxFrameBytes int64 // larger frames are discarded, answered frame_too_large
	QueueFrames   int   // the send queue's bound in frames; beyond, a Source catches up
	QueueBytes    int64 // the send queue's bound in bytes

	PingInterval time.Duration // a ping every
	PongWait     time.Duration // nothing read for this long drops the connection
	WriteWait    time.Duration // a write that makes no progress for this long drops it

	GoingAway string           // the reason of the close frame (1001) of a graceful close
	Dropped   func(why string) // counts a drop (Drop* constants); may be nil
}

// What EnqueueEvent did.
const (
	Queued      = iota
	QueueBehind // the frame did not fit: its Src is now catching up
	QueueDead   // the connection is gone (or was dropped now)
)

// Conn is one websocket connection: its read pump and its write pump,
// the send queue between whoever queues frames and the write pump, and
// the list of Sources catching up.
//
// Goroutines: the read pump runs in Run's goroutine (the HTTP handler's)
// and owns the connection's lifetime; Run starts the write pump — the
// only writer of the connection — and joins it before it returns.
//
// Frames reach the write pump through a queue bounded by bytes
// (QueueBytes) and frames (QueueFrames), counting the frames the pump has
// taken and not yet handed to the connection (what BatchConn gathers, at
// most BatchBytes, is not counted). Whoever queues never waits. An event
// that does not fit is not queued: its Source goes on the catch-up list,
// and the write pump pulls its frames once the queue is empty, so a peer
// that keeps reading never loses a frame and a catch-up of any length
// never fills the queue. Other frames (replies, pushes) get twice the
// bound; beyond it the connection is dropped with close code 1008. A
// connection whose write makes no progress for WriteWait is closed.
//
// mu guards the queue, dead/kill*, catchup and the counts of frames out;
// it is a leaf: nothing else is taken under it.
type Conn struct {
	ws    *websocket.Conn
	batch *BatchConn
	cfg   Config
	h     Handler

	wake      chan struct{} // (cap 1) a frame was queued or a Source started catching up
	killed    chan struct{} // closed by Kill: close with killCode, drop the queue
	closing   chan struct{} // closed by CloseGracefully: flush the queue, close 1001
	readDone  chan struct{} // closed when the read pump returns
	pumpDone  chan struct{} // closed when the write pump returns
	started   atomic.Bool   // Run was called
	closeOnce sync.Once

	mu         sync.Mutex
	dead       bool
	killCode   int
	killReason string
	catchup    []Source
	queue      []Frame // queue[qHead:] waits for the write pump
	qHead      int
	inHand     int   // frames the pump took (take) and has not finished writing
	qBytes     int64 // bytes of the queued frames and of those in hand

	outFrames, outBytes int64        // guarded by mu: counted as the write pump takes them
	inFrames, inBytes   atomic.Int64 // the read pump's
}

// New returns the Conn of ws (nil in tests that only queue), which hands
// what it reads to h. Run runs it.
func New(ws *websocket.Conn, cfg Config, h Handler) *Conn {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Conn{
		ws:       ws,
		batch:    cfg.Batch,
		cfg:      cfg,
		h:        h,
		wake:     make(chan struct{}, 1),
		killed:   make(chan struct{}),
		closing:  make(chan struct{}),
		readDone: make(chan struct{}),
		pumpDone: make(chan struct{}),
	}
}

// Batch is the connection's BatchConn (nil when writes are not batched).
func (c *Conn) Batch() *BatchConn { return c.batch }

// Enqueue queues a frame that is not an event (a reply, a push) without
// ever waiting; see queueFrame. It reports whether the frame was queued.
// Safe to call with any lock of the caller held (mu is a leaf).
func (c *Conn) Enqueue(f Frame) bool { return c.queueFrame(f, false) == Queued }

// EnqueueEvent queues an event frame of f.Src, which must be set; see
// queueFrame. When it returns QueueBehind, f.Src is catching up.
func (c *Conn) EnqueueEvent(f Frame) int { return c.queueFrame(f, true) }

// queueFrame queues f without ever waiting, within the queue's bounds
// (QueueFrames, QueueBytes; an empty queue, with nothing in the pump's
// hands, takes any frame). An event that does not fit is not queued: its
// Source goes on the catch-up list, and the write pump will pull that
// event and the following ones once the queue is empty. Other frames may
// take the queue to twice its bounds; beyond that the connection is
// dropped (slow consumer).
func (c *Conn) queueFrame(f Frame, event bool) int {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return QueueDead
	}
	maxFrames, maxBytes := c.cfg.QueueFrames, c.cfg.QueueBytes
	if !event {
		maxFrames, maxBytes = 2*maxFrames, 2*maxBytes
	}
	// The frames the pump has in hand count: a pump stuck in a write to a
	// peer that stopped reading holds a batch of them.
	if n := len(c.queue) - c.qHead + c.inHand; n > 0 && (n >= maxFrames || c.qBytes+int64(len(f.Data)) > maxBytes) {
		if event {
			c.catchup = append(c.catchup, f.Src)
			c.mu.Unlock()
			c.signal()
			return QueueBehind
		}
		held := c.qBytes
		c.mu.Unlock()
		c.dropped(DropQueueFull)
		c.Kill(websocket.ClosePolicyViolation, fmt.Sprintf("slow consumer: send queue full (%d frames, %d bytes)", n, held))
		return QueueDead
	}
	c.pushLocked(f)
	c.mu.Unlock()
	c.signal()
	return Queued
}

func (c *Conn) pushLocked(f Frame) {
	if c.qHead > 64 && c.qHead > len(c.queue)/2 {
		n := copy(c.queue, c.queue[c.qHead:])
		clear(c.queue[n:])
		c.queue, c.qHead = c.queue[:n], 0
	}
	c.queue = append(c.queue, f)
	c.qBytes += int64(len(f.Data))
}

func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Conn) dropped(why string) {
	if c.cfg.Dropped != nil {
		c.cfg.Dropped(why)
	}
}

// CatchUp puts src on the catch-up list: the write pump pulls its frames
// once the queue is empty (a new subscription).
func (c *Conn) CatchUp(src Source) {
	c.mu.Lock()
	c.catchup = append(c.catchup, src)
	c.mu.Unlock()
	c.signal()
}

// StopCatchUp takes src off the catch-up list (caught up, or gone).
func (c *Conn) StopCatchUp(src Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.catchup {
		if s == src {
			c.catchup = append(c.catchup[:i], c.catchup[i+1:]...)
			return
		}
	}
}

// take returns what the write pump does next: the queued frames, at most
// max, appended to dst in order; else a Source to pull for (round robin
// between those catching up); else nothing (dst unchanged, nil). Catching
// up waits for an empty queue, so the frames of a Source that fell
// behind, queued before, go out first. The frames are taken under one
// lock, not one each: the event log queues under the same lock, from the
// session's goroutine, as fast as the pump takes. Taken frames stay within
// the queue's bounds (inHand) until the pump says they are written:
// written, the frames of its last take, which dst may reuse the array of.
func (c *Conn) take(dst []Frame, max int, written []Frame) ([]Frame, Source) {
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
	src := c.catchup[0]
	c.catchup = append(c.catchup[1:], src)
	return dst, src
}

// writtenLocked counts frames of a take as written: out of the queue's
// bounds, into the counts. Counting here, under the lock the pump holds
// anyway, spares each frame an atomic add on a contended cache line.
func (c *Conn) writtenLocked(frames []Frame) {
	var n int64
	for i, f := range frames {
		n += int64(len(f.Data))
		frames[i] = Frame{} // the pump's batch array holds no frame it has written
	}
	c.inHand -= len(frames)
	c.qBytes -= n
	c.outFrames += int64(len(frames))
	c.outBytes += n
}

// written is writtenLocked for the frames of a batch's last take.
func (c *Conn) written(frames []Frame) {
	if len(frames) == 0 {
		return
	}
	c.mu.Lock()
	c.writtenLocked(frames)
	c.mu.Unlock()
}

// countPulled counts the frames of a catch-up chunk the write pump pulled.
func (c *Conn) countPulled(frames [][]byte) {
	var n int
	for _, f := range frames {
		n += len(f)
	}
	c.mu.Lock()
	c.outFrames += int64(len(frames))
	c.outBytes += int64(n)
	c.mu.Unlock()
}

// Counts returns the frames and payload bytes read from the peer and
// written to it so far.
func (c *Conn) Counts() (inFrames, inBytes, outFrames, outBytes int64) {
	c.mu.Lock()
	outFrames, outBytes = c.outFrames, c.outBytes
	c.mu.Unlock()
	return c.inFrames.Load(), c.inBytes.Load(), outFrames, outBytes
}

// dropQueue forgets the queued frames and those in hand (the connection
// is dropped; only the write pump calls it, between batches).
func (c *Conn) dropQueue() {
	c.mu.Lock()
	c.queue, c.qHead, c.inHand, c.qBytes = nil, 0, 0, 0
	c.mu.Unlock()
}

// Kill drops the connection: the write pump discards its queue, sends a
// close frame with code and reason, and closes the connection. The drop
// is logged at once (the write pump may be stuck in a write to this very
// peer until WriteWait), once mu is released.
func (c *Conn) Kill(code int, reason string) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead, c.killCode, c.killReason = true, code, reason
	close(c.killed)
	c.mu.Unlock()
	if code == websocket.ClosePolicyViolation {
		c.cfg.Log.Warn("dropping websocket client", "code", code, "reason", reason)
	}
}

// Killed reports whether the connection was dropped (Kill), with the
// close code and reason it was given.
func (c *Conn) Killed() (dead bool, code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead, c.killCode, c.killReason
}

// CloseGracefully has the write pump send what is queued, then a close
// frame (1001, Config.GoingAway). It does not wait.
func (c *Conn) CloseGracefully() { c.closeOnce.Do(func() { close(c.closing) }) }

// Close closes the connection gracefully (CloseGracefully) and waits until
// both pumps have ended, or ctx is done: then the network connection is
// closed under them and ctx's error returned. It may be called more than
// once and from any goroutine; on a Conn whose Run was never called it
// returns at once.
func (c *Conn) Close(ctx context.Context) error {
	c.CloseGracefully()
	if !c.started.Load() {
		return nil
	}
	select {
	case <-c.pumpDone:
	case <-ctx.Done():
		c.ws.Close()
		return ctx.Err()
	}
	select {
	case <-c.readDone:
		return nil
	case <-ctx.Done():
		c.ws.Close()
		return ctx.Err()
	}
}

// Run runs the connection until the peer goes away, the connection is
// dropped (Kill) or closed (Close): the read pump on the calling
// goroutine, the write pump on one of its own, which Run joins before it
// returns. The handler's Closed is called when the read pump ends, before
// the write pump is joined.
func (c *Conn) Run() {
	c.started.Store(true)
	go c.writePump()
	err := c.readPump()
	c.h.Closed(err)
	<-c.pumpDone
}

// readPump reads frames until the connection fails. A frame larger than
// MaxFrameBytes is read to its end without being kept and answered with
// frame_too_large, echoing the frame's id when its first FrameHeadBytes
// show it (else null); the connection stays open. The memory frames take
// while they are read and handled comes from the inbound budget (all
// connections): a frame that would exceed it is read to its end without
// being kept and refused with limit_exceeded (never waited for:
// connections holding parts of the budget could wait for each other
// forever).
func (c *Conn) readPump() error {
	defer close(c.readDone)
	pongWait := c.cfg.PongWait
	c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		c.ws.SetReadDeadline(time.Now().Add(pongWait))
		return nil
	})
	max := c.cfg.MaxFrameBytes
	var buf []byte
	for {
		mt, r, err := c.ws.NextReader()
		if err != nil {
			c.readError(err)
			return err
		}
		c.ws.SetReadDeadline(time.Now().Add(pongWait))
		var held int64 // inbound budget taken for this frame
		data, status, err := ReadFrame(r, buf[:0], max, func(grow int64) bool {
			if !c.cfg.Inbound.TryAcquire(grow) {
				return false
			}
			held += grow
			return true
		})
		if err != nil {
			c.cfg.Inbound.Release(held)
			c.readError(err)
			return err
		}
		c.inFrames.Add(1)
		c.inBytes.Add(status.Size)
		switch {
		case status.TooLarge:
			c.h.Refuse(status.ID, protocol.Errorf(protocol.CodeFrameTooLarge,
				"frame of %d bytes is larger than limits.maxFrameBytes (%d); it was discarded", status.Size, max))
		case status.Refused:
			c.h.Refuse(status.ID, protocol.Errorf(protocol.CodeLimitExceeded,
				"frame of %d bytes refused: ccproxy is reading and handling other large frames (at most %d bytes at once, all connections); it was discarded, send it again later", status.Size, c.cfg.Inbound.Max()))
		case mt != websocket.TextMessage:
			c.h.Refuse(protocol.Null, protocol.Errorf(protocol.CodeBadRequest, "binary frames are not accepted: send each request as a JSON text frame"))
		default:
			c.h.HandleFrame(data)
		}
		// Keep a small buffer for the next frame; a large one goes back
		// to the budget and the garbage collector.
		buf = data
		if cap(buf) > 64<<10 {
			buf = nil
		}
		c.cfg.Inbound.Release(held)
		select {
		case <-c.killed:
			return nil
		default:
		}
	}
}

// readError reports the failed read that ends the read pump. Nothing
// read for PongWait (no frame, no pong) drops the connection: counted,
// and logged as a WARN with its reason and bound, as the write pump's
// drops are; any other failure is the peer going away (debug).
func (c *Conn) readError(err error) {
	if IsTimeout(err) {
		c.dropped(DropPongTimeout)
		c.cfg.Log.Warn("dropping websocket client", "reason",
			fmt.Sprintf("no frame or pong for %s (pong timeout); closed without a close frame", c.cfg.PongWait))
		return
	}
	c.cfg.Log.Debug("websocket read ended", "err", err)
}

// writePump is the only writer of the connection: queued frames first,
// then catch-up pulls, with a ping every PingInterval. It closes the
// connection when it returns, which ends the read pump.
func (c *Conn) writePump() {
	defer close(c.pumpDone)
	defer c.ws.Close()
	ping := time.NewTicker(c.cfg.PingInterval)
	defer ping.Stop()
	batch := make([]Frame, 0, maxBatchFrames) // what take took, reused
	for {
		select {
		case <-c.killed:
			c.dropQueue()
			c.writeClose(c.killCode, c.killReason)
			return
		default:
		}
		if frames, src := c.take(batch[:0], maxBatchFrames, nil); len(frames) > 0 || src != nil {
			if !c.writeBatch(frames, src) {
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
			var frames []Frame
			for {
				if frames, _ = c.take(batch[:0], maxBatchFrames, frames); len(frames) == 0 {
					break
				}
				for _, f := range frames {
					c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteWait))
					if !c.write(f) {
						return
					}
				}
			}
			c.writeClose(websocket.CloseGoingAway, c.cfg.GoingAway)
			return
		case <-c.readDone:
			return
		case <-c.wake:
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.cfg.WriteWait)); err != nil {
				c.writeError(err)
				return
			}
		}
	}
}

// writeBatch writes frames (or, for a Source catching up, the frames
// pulled from it) and whatever else is queued, up to maxBatchFrames
// frames or pulls, gathered by the connection into as few writes as its
// bound allows (BatchConn), so a burst of frames costs a few syscalls
// instead of one per frame. Nothing waits for frames to arrive: a batch
// is what was already queued, so it adds no latency. frames' array (of
// capacity maxBatchFrames) is reused for what is taken next.
func (c *Conn) writeBatch(frames []Frame, src Source) bool {
	if c.batch != nil {
		c.batch.Begin()
	} else {
		c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteWait))
	}
	for n := 0; ; {
		var written []Frame
		if src == nil {
			for _, f := range frames {
				if !c.write(f) {
					return false
				}
			}
			n += len(frames)
			written = frames
		} else {
			pulled := src.Pull()
			c.countPulled(pulled)
			for _, f := range pulled {
				if !c.write(Frame{Data: f, Src: src}) {
					return false
				}
			}
			n++
		}
		if n >= maxBatchFrames {
			c.written(written)
			break
		}
		if frames, src = c.take(frames[:0], maxBatchFrames-n, written); len(frames) == 0 && src == nil {
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

func (c *Conn) write(f Frame) bool {
	if f.Src != nil && f.Src.Gone() {
		return true
	}
	select {
	case <-c.killed:
		return true // dropped: the loop sends the close frame next
	default:
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, f.Data); err != nil {
		c.writeError(err)
		return false
	}
	return true
}

// writeError reports a failed write of the write pump, which then closes
// the connection. A write that made no progress for WriteWait drops a slow
// peer: counted, and logged as a WARN with its reason and bound, as a full
// queue's drop is (Kill); any other failure is the peer going away
// (debug). A connection dropped already was counted and logged then.
func (c *Conn) writeError(err error) {
	select {
	case <-c.killed: // dropped already, and logged then
		c.cfg.Log.Debug("websocket write failed", "err", err)
		return
	default:
	}
	if IsTimeout(err) {
		c.dropped(DropWriteTimeout)
		c.cfg.Log.Warn("dropping websocket client", "reason",
			fmt.Sprintf("slow consumer: its connection accepted nothing for %s (write timeout); closed without a close frame", c.cfg.WriteWait))
		return
	}
	c.cfg.Log.Debug("websocket write failed", "err", err)
}

func (c *Conn) writeClose(code int, reason string) {
	if len(reason) > 123 {
		reason = reason[:123]
	}
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(c.cfg.WriteWait))
}

// IsTimeout reports whether err is a deadline that passed.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

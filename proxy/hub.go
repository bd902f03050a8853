package proxy

import (
	"fmt"
	"github.com/ccproxy/ccproxy/proxy/eventlog"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
)

// hub is a session's event log and its subscriptions: the session hands it
// frames (events with their seq, state pushes, exit frames, permission
// pushes) and the hub replays, catches up and fans out.
//
// The event log (eventlog.Log: memory tail, then disk) is the only buffer of
// events. A live subscription gets each event queued on its client as it
// is appended; when that client's queue is over its bound (bytes or
// frames) the subscription is not dropped but goes back to catching up:
// the client's write pump pulls the events from the log (memory or disk,
// in chunks) until it reaches the end, and the subscription turns live
// again. A client that keeps reading therefore never loses an event
// unless the log itself lost it (the disk budget): then it gets
// session/gap. Pushes (state, permission, exit) go to live subscriptions
// and to those that fell behind after being live (so a prompt they were
// shown is also resolved); a subscription catching up for the first time
// gets the current state, the pending permission requests and the exit
// report when it turns live.
//
// Pushes keep their place among the events. A live subscription gets a
// push queued on its client at once, behind the events queued before it.
// One that fell behind gets it recorded on the subscription (pending) with
// the seq it follows (the log's LastSeq when pushed); pull cuts its chunk
// at that seq and puts the push right after the event it follows, and
// goLive hands out what is still pending before turning live, so the
// client receives the same order as a live one, nothing lost or doubled.
// session/state is treated the same (in order; consecutive states with no
// event between them collapse into the last). pending is bounded by
// maxPendingPushBytes per subscription: over it the client is closed 1008
// ("slow consumer: …pushes waiting…") and reconnects.
//
// Goroutines: none of its own. The session's stdout loop appends; client
// write pumps pull (disk reads happen without any lock: Log.Collect pins the
// segments read); the server's budget trims memory.
//
// Locking: mu guards the log, subs and every subscription's next, live,
// wasLive, sentState and pending. Lock order: Server.mu, then Session.mu, then
// hub.mu, then client.mu; eventlog.Budget.mu comes before hub.mu and is never
// taken with a session's lock held. Turning live takes Session.mu then
// hub.mu, so it is atomic with respect to everything the session pushes.
type hub struct {
	session string
	log     *slog.Logger
	budget  *eventlog.Budget

	mu         sync.Mutex
	elog       *eventlog.Log
	subs       map[*client]*subscription
	exited     bool // the session exited: its memory is evicted first
	released   bool
	diskLogged bool // a spill error was logged

	spillFailed func(n int) // counts failed spills (metrics); may be nil
}

// subscription is one client's subscription to one session. While it
// catches up, the client's write pump pulls logged frames from next on;
// then it turns live and the hub queues frames for it directly.
type subscription struct {
	c         *client
	s         *Session
	next      int64       // guarded by hub.mu: the next seq to pull
	live      bool        // guarded by hub.mu
	wasLive   bool        // guarded by hub.mu: was live, fell behind; pushes still go to it
	sentState string      // guarded by hub.mu: the key (Session.stateKeyLocked) of the state this client was last told
	gone      atomic.Bool // unsubscribed: drop its queued frames

	// Pushes made while it is behind (wasLive, not live), oldest first,
	// each with the seq it follows; pull and goLive hand them out in
	// place. Guarded by hub.mu; pendBytes is the sum of their sizes.
	pending   []pendingPush
	pendBytes int64
}

// Pull returns the next frames of the subscription, catching up
// (wsconn.Source: the client's write pump calls it).
func (sub *subscription) Pull() [][]byte { return sub.s.pull(sub) }

// Gone reports that the subscription ended (wsconn.Source): its queued
// frames are dropped.
func (sub *subscription) Gone() bool { return sub.gone.Load() }

// pendingPush is a push to a subscription that is behind: data goes out
// right after the event after (0: before every event).
type pendingPush struct {
	after int64
	data  []byte
	state bool // a session/state frame (a later one replaces it)
}

// maxPendingPushBytes bounds the pushes a subscription that is behind
// holds; over it its client is closed 1008 (it reconnects and resumes).
const maxPendingPushBytes = 1 << 20

func newHub(session string, log *slog.Logger, budget *eventlog.Budget, memMax, diskMax int64, dir func() string) *hub {
	h := &hub{session: session, log: log, budget: budget, subs: map[*client]*subscription{}}
	var global *atomic.Int64
	if budget != nil {
		global = budget.Used()
	}
	h.elog = eventlog.New(memMax, diskMax, dir, session, global)
	if budget != nil {
		budget.Add(h)
	}
	return h
}

// newSessionHub is the hub of a new session of s: its replay log spills
// to s's spool (through Options.spillCreate when a test set it) and its
// failed spills are counted in s's metrics.
func (s *Server) newSessionHub(id string) *hub {
	h := newHub(id, s.log.With("session", id), s.logs, s.opts.ReplayBytes, max(s.opts.ReplayDiskBytes, 0), s.spool.Dir)
	if s.opts.spillCreate != nil {
		h.elog.SetCreate(s.opts.spillCreate)
	}
	h.spillFailed = s.metrics.spillFailed
	return h
}

// seqs returns the oldest and newest seq the log holds.
func (h *hub) seqs() (first, last int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.elog.FirstSeq(), h.elog.LastSeq()
}

func (h *hub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// append logs the next event — its seq is the log's last plus one, its
// frame what build makes of that seq — and queues the frame for the live
// subscribers; one whose client is behind goes back to catching up. It
// never waits for a client. It returns the frame (nil when the hub is
// released) and whether the server's memory budget is exceeded (the
// caller trims, without the session's lock). The seq is taken and the
// frame built under the hub's lock, so events logged by two goroutines (an
// old claude process's last lines and its successor's first) keep their
// order, at one lock per event.
func (h *hub) append(build func(seq int64) []byte) (frame []byte, overBudget bool) {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return nil, false
	}
	seq := h.elog.LastSeq() + 1
	frame = build(seq)
	h.elog.Append(seq, frame)
	for _, sub := range h.subs {
		if sub.live {
			h.sendEventLocked(sub, seq, frame)
		}
	}
	h.checkDiskLocked()
	h.mu.Unlock()
	return frame, h.budget != nil && h.budget.Over()
}

func (h *hub) sendEventLocked(sub *subscription, seq int64, frame []byte) {
	switch sub.c.enqueueEvent(outFrame{data: frame, sub: sub}) {
	case queueBehind:
		// The client is behind: it catches up from the log from seq on
		// (enqueueEvent put it on the client's catch-up list).
		sub.c.srv.metrics.subscriptionBehind()
		if !sub.wasLive {
			sub.c.log.Debug("client fell behind; it catches up from the replay log", "session", h.session, "seq", seq)
		}
		sub.live, sub.wasLive, sub.next = false, true, seq
	case queueDead:
		sub.live = false
	}
}

func (h *hub) checkDiskLocked() {
	if n := h.elog.TakeDiskFails(); n > 0 && h.spillFailed != nil {
		h.spillFailed(n)
	}
	if err := h.elog.TakeDiskErr(); err != nil {
		if !h.diskLogged {
			h.diskLogged = true
			h.log.Warn("replay log: spilling to disk failed; older events are dropped instead", "err", err)
		}
	}
}

// push queues a frame that is not an event (permission/request,
// permission/resolved, session/exited) for the live subscriptions and
// records it, in its place among the events, for those that fell behind
// after being live.
func (h *hub) push(frame []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, sub := range h.subs {
		switch {
		case sub.live:
			c.enqueue(outFrame{data: frame, sub: sub})
		case sub.wasLive:
			h.addPendingLocked(sub, frame, false)
		}
	}
}

// pushState queues a session/state frame for the live subscriptions,
// records it in place for those that fell behind after being live, and
// notes that they were told state. One catching up for the first time is
// told the state when it turns live, if it changed.
func (h *hub) pushState(frame []byte, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, sub := range h.subs {
		switch {
		case sub.live:
			sub.sentState = key
			c.enqueue(outFrame{data: frame, sub: sub})
		case sub.wasLive:
			sub.sentState = key
			h.addPendingLocked(sub, frame, true)
		}
	}
}

// addPendingLocked records frame for sub, which is behind, after the
// newest event. A state frame replaces a state frame recorded after the
// same event (the client would see it replaced at once anyway). Over
// maxPendingPushBytes the client is closed 1008 and the subscription
// records nothing more.
func (h *hub) addPendingLocked(sub *subscription, frame []byte, state bool) {
	after := h.elog.LastSeq()
	if n := len(sub.pending); state && n > 0 && sub.pending[n-1].state && sub.pending[n-1].after == after {
		sub.pendBytes += int64(len(frame)) - int64(len(sub.pending[n-1].data))
		sub.pending[n-1].data = frame
		return
	}
	if sub.pendBytes+int64(len(frame)) > maxPendingPushBytes {
		n, b := len(sub.pending), sub.pendBytes
		sub.pending, sub.pendBytes, sub.wasLive = nil, 0, false
		sub.c.kill(websocket.ClosePolicyViolation, fmt.Sprintf("slow consumer: %d pushes (%d bytes) waiting while catching up on session %s", n, b, h.session))
		return
	}
	sub.pending = append(sub.pending, pendingPush{after: after, data: frame, state: state})
	sub.pendBytes += int64(len(frame))
}

// takePendingLocked appends to frames the pending pushes of sub that
// follow events before sub.next (the client has those events) and
// forgets them.
func takePendingLocked(sub *subscription, frames [][]byte) [][]byte {
	i := 0
	for ; i < len(sub.pending) && sub.pending[i].after < sub.next; i++ {
		frames = append(frames, sub.pending[i].data)
		sub.pendBytes -= int64(len(sub.pending[i].data))
	}
	if i > 0 {
		n := copy(sub.pending, sub.pending[i:])
		clear(sub.pending[n:])
		sub.pending = sub.pending[:n]
		if n == 0 {
			sub.pending = nil
		}
	}
	return frames
}

// exitedMemBytes is what an exited session's log keeps in memory: no
// event comes any more, and a client that subscribes later reads the rest
// from disk (the page cache) in chunks anyway.
const exitedMemBytes = 1 << 20

// setExited marks the session exited: its log spills all but its last
// exitedMemBytes to disk, and what is left is the first the server's
// budget evicts.
func (h *hub) setExited() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exited = true
	h.elog.TrimMem(min(h.elog.MemMax(), exitedMemBytes))
	h.checkDiskLocked()
}

// subscribe subscribes c (replacing an earlier subscription of c) and
// queues, atomically with respect to new events: the reply (made by
// reply from the log's range), a session/gap if the log no longer reaches
// back to afterSeq. The client's write pump then pulls the logged events
// (pull) until the subscription turns live (goLive).
func (h *hub) subscribe(c *client, s *Session, afterSeq int64, stateKey string, reply func(first, last int64) ([]byte, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	first, last := h.elog.FirstSeq(), h.elog.LastSeq()
	if afterSeq > last {
		return protocol.Errorf(protocol.CodeBadRequest, "session/subscribe: data.afterSeq: %d is beyond the last seq of session %s (%d): events are numbered anew when ccproxy restarts", afterSeq, h.session, last)
	}
	r, err := reply(first, last)
	if err != nil {
		return err
	}
	if old := h.subs[c]; old != nil {
		old.gone.Store(true)
		c.dropSub(old)
	}
	sub := &subscription{c: c, s: s, next: max(afterSeq+1, first), sentState: stateKey}
	c.enqueue(outFrame{data: r})
	if afterSeq+1 < first {
		if gap := h.gapFrame(first); gap != nil {
			c.enqueue(outFrame{data: gap, sub: sub})
		}
	}
	h.subs[c] = sub
	c.addSub(sub)
	return nil
}

func (h *hub) gapFrame(first int64) []byte {
	gap, err := encodePush(protocol.TypeSessionGap, protocol.SessionGap{Session: h.session, FirstSeq: first})
	if err != nil {
		h.log.Error("session gap", "err", err)
		return nil
	}
	return gap
}

// Chunks a write pump pulls at a time while a subscription catches up.
const (
	pullFrames = 256
	pullBytes  = 4 << 20
)

// pull returns the next logged frames of a catching-up subscription (a
// session/gap first when the log lost some it needed), read from memory or
// disk, with the pending pushes in their places (the chunk ends at the
// event the oldest pending push follows), and whether it has reached the
// end of the log. Only sub's client's
// write pump calls it, so nobody else moves sub.next meanwhile.
func (h *hub) pull(sub *subscription) (frames [][]byte, atEnd bool) {
	h.mu.Lock()
	if sub.live || sub.gone.Load() || h.subs[sub.c] != sub {
		h.mu.Unlock()
		return nil, false
	}
	if first := h.elog.FirstSeq(); sub.next < first {
		// Dropped from the log (disk budget) while this client was behind.
		if gap := h.gapFrame(first); gap != nil {
			frames = append(frames, gap)
		}
		sub.next = first
	}
	frames = takePendingLocked(sub, frames)
	if sub.next > h.elog.LastSeq() {
		h.mu.Unlock()
		return frames, true
	}
	from := sub.next
	n := pullFrames
	if len(sub.pending) > 0 {
		// Up to the event the oldest pending push follows.
		n = int(min(int64(n), sub.pending[0].after-from+1))
	}
	ch := h.elog.Collect(from, n, pullBytes)
	h.mu.Unlock()

	got, err := ch.Read()

	h.mu.Lock()
	defer h.mu.Unlock()
	ch.Release()
	sub.next = from + int64(ch.Len())
	if err != nil {
		h.log.Warn("replay log: reading spilled events failed; the client gets session/gap", "err", err)
		if gap := h.gapFrame(sub.next); gap != nil {
			frames = append(frames, gap)
		}
	} else {
		frames = append(frames, got...)
	}
	frames = takePendingLocked(sub, frames)
	return frames, sub.next > h.elog.LastSeq()
}

// goLive turns a subscription that has pulled the whole log live, unless
// events came meanwhile (it returns false; the pump pulls again). It
// returns the pushes still pending (made since the last pull; they follow
// every event), then what extra returns: what the subscriber gets on
// turning live (state, pending permission requests, exit report); the
// caller holds the session's lock, so nothing the session pushes can come
// between.
func (h *hub) goLive(sub *subscription, extra func(sub *subscription) [][]byte) ([][]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub.live || sub.gone.Load() || h.subs[sub.c] != sub || sub.next <= h.elog.LastSeq() {
		return nil, false
	}
	sub.live = true
	sub.c.catchupDone(sub)
	frames := takePendingLocked(sub, nil)
	return append(frames, extra(sub)...), true
}

// unsubscribe ends c's subscription; its queued frames are dropped.
func (h *hub) unsubscribe(c *client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := h.subs[c]
	if sub == nil {
		return false
	}
	sub.gone.Store(true)
	delete(h.subs, c)
	c.dropSub(sub)
	return true
}

// release forgets every subscriber (their queued frames still go out) and
// frees the log: memory and spill files. The hub takes no more events.
func (h *hub) release() {
	h.mu.Lock()
	for c, sub := range h.subs {
		c.dropSub(sub)
	}
	h.subs = map[*client]*subscription{}
	h.elog.Release()
	h.released = true
	h.mu.Unlock()
	if h.budget != nil {
		h.budget.Remove(h)
	}
}

// Spill moves the oldest frames in memory to disk until memory holds at
// most keep bytes; it returns how many bytes it freed.
func (h *hub) Spill(keep int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	before := h.elog.MemBytes()
	h.elog.TrimMem(keep)
	h.checkDiskLocked()
	return before - h.elog.MemBytes()
}

// EvictionInfo is for the budget (eventlog.Member).
func (h *hub) EvictionInfo() (exited bool, mem, oldest int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exited, h.elog.MemBytes(), h.elog.OldestStamp()
}

// LogBytes is the memory and disk bytes of the log (eventlog.Member).
func (h *hub) LogBytes() (mem, disk int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.elog.MemBytes(), h.elog.DiskBytes()
}

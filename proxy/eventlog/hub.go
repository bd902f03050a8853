package eventlog

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Subscriber is what a Hub needs of one subscription's reader (in proxy,
// a subscription of a websocket client: it queues frames on its client's
// connection). The Hub calls every method with its lock held: none may
// wait, nor take a lock that comes before the hub's (a session's); each
// may take the reader's own locks.
type Subscriber interface {
	// Send queues the subscribe reply: a frame that is not the
	// subscription's (it goes out even if the subscription ends first).
	Send(frame []byte)
	// Push queues a frame of the subscription that is not an event (a
	// push, a gap), behind what was queued before.
	Push(frame []byte)
	// Event queues event seq of a live subscription without waiting.
	// Behind: it did not fit, and the reader now catches up (it pulls
	// from seq on, Hub.Pull, until GoLive). Gone: the reader is gone.
	Event(seq int64, frame []byte) Delivery
	// CatchUp: the subscription starts; the reader pulls (Hub.Pull)
	// until it turns live (GoLive).
	CatchUp()
	// CaughtUp: the subscription turned live; the reader pulls no more.
	CaughtUp()
	// Forget: the subscription ended: replaced or unsubscribed (then it
	// is Gone already, and its queued frames are dropped), or the hub was
	// released (they still go out).
	Forget()
	// Lagged: the pushes kept for the subscription while it is behind
	// are over maxPendingPushBytes: close the reader (in proxy, 1008)
	// with reason; it reconnects and resumes.
	Lagged(reason string)
}

// Delivery is what Subscriber.Event did.
type Delivery int

const (
	Delivered Delivery = iota
	Behind             // did not fit: the reader catches up from the log
	Gone               // the reader is gone
)

// HubConfig makes a Hub.
type HubConfig struct {
	Name    string       // the session's id: spill file prefix, messages
	Log     *slog.Logger // spill errors
	Budget  *Budget      // the memory budget of all logs; may be nil
	MemMax  int64        // the log's memory bound
	DiskMax int64        // the log's disk bound (0: no disk)
	Dir     func() string

	Create      func(path string) (SpillFile, error) // spill files (nil: CreateSpillFile)
	SpillFailed func(n int)                          // counts failed spills; may be nil
	// Gap is the frame that tells a subscriber the log no longer holds
	// the events before first (in proxy, session/gap); nil: none is sent.
	Gap func(first int64) []byte
}

// Hub is a session's event log and its subscriptions: the session hands
// it frames (events, to which it gives their seq; state pushes; other
// pushes) and the hub replays, catches up and fans out.
//
// The Log (memory tail, then disk) is the only buffer of events. A live
// subscription gets each event queued on its reader as it is appended
// (Subscriber.Event); when that reader is behind (its queue over its
// bound) the subscription is not dropped but goes back to catching up:
// the reader pulls the events from the log (Pull: memory or disk, in
// chunks) until it reaches the end, and the subscription turns live again
// (GoLive). A reader that keeps reading therefore never loses an event
// unless the log itself lost it (the disk budget): then it gets a gap
// frame (HubConfig.Gap). Pushes (state, permission, exit) go to live
// subscriptions and to those that fell behind after being live (so a
// prompt they were shown is also resolved); a subscription catching up
// for the first time gets what GoLive's extra returns when it turns live.
//
// Pushes keep their place among the events. A live subscription gets a
// push queued at once, behind the events queued before it. One that fell
// behind gets it recorded on the subscription (pending) with the seq it
// follows (the log's LastSeq when pushed); Pull cuts its chunk at that seq
// and puts the push right after the event it follows, and GoLive hands
// out what is still pending before turning live, so the reader receives
// the same order as a live one, nothing lost or doubled. State pushes are
// treated the same (in order; consecutive states with no event between
// them collapse into the last). pending is bounded by maxPendingPushBytes
// per subscription: over it the reader is closed (Subscriber.Lagged).
//
// mu guards the log, subs and every subscription's fields but gone.
type Hub struct {
	name        string
	log         *slog.Logger
	budget      *Budget
	gap         func(first int64) []byte
	spillFailed func(n int)

	mu         sync.Mutex
	elog       *Log
	subs       map[any]*Subscription
	exited     bool // the session exited: its memory is evicted first
	released   bool
	diskLogged bool // a spill error was logged
}

// Subscription is one reader's subscription to a Hub. While it catches
// up, the reader pulls logged frames from next on; then it turns live and
// the hub queues frames for it directly.
type Subscription struct {
	s        Subscriber
	key      any
	next     int64       // guarded by Hub.mu: the next seq to pull
	live     bool        // guarded by Hub.mu
	wasLive  bool        // guarded by Hub.mu: was live, fell behind; pushes still go to it
	stateKey string      // guarded by Hub.mu: the key of the state this reader was last told
	gone     atomic.Bool // unsubscribed or replaced

	// Pushes made while it is behind (wasLive, not live), oldest first,
	// each with the seq it follows; Pull and GoLive hand them out in
	// place. Guarded by Hub.mu; pendBytes is the sum of their sizes.
	pending   []pendingPush
	pendBytes int64
}

// NewSubscription is a subscription for s, to hand to Hub.Subscribe.
func NewSubscription(s Subscriber) *Subscription { return &Subscription{s: s} }

// Gone reports that the subscription was replaced or unsubscribed. It may
// be called without any lock.
func (sub *Subscription) Gone() bool { return sub.gone.Load() }

// WasLive reports whether the subscription was live before and fell
// behind. Hub.mu must be held: call it from GoLive's extra.
func (sub *Subscription) WasLive() bool { return sub.wasLive }

// StateKey is the key of the state the reader was last told (Subscribe,
// PushState). Hub.mu must be held: call it from GoLive's extra.
func (sub *Subscription) StateKey() string { return sub.stateKey }

// SetStateKey notes that the reader was told the state of key. Hub.mu
// must be held: call it from GoLive's extra.
func (sub *Subscription) SetStateKey(key string) { sub.stateKey = key }

// pendingPush is a push to a subscription that is behind: data goes out
// right after the event after (0: before every event).
type pendingPush struct {
	after int64
	data  []byte
	state bool // a state frame (a later one replaces it)
}

// maxPendingPushBytes bounds the pushes a subscription that is behind
// holds; over it its reader is closed (it reconnects and resumes).
const maxPendingPushBytes = 1 << 20

// NewHub is a hub with an empty log, a member of cfg.Budget.
func NewHub(cfg HubConfig) *Hub {
	h := &Hub{name: cfg.Name, log: cfg.Log, budget: cfg.Budget, gap: cfg.Gap, spillFailed: cfg.SpillFailed, subs: map[any]*Subscription{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	var global *atomic.Int64
	if cfg.Budget != nil {
		global = cfg.Budget.Used()
	}
	h.elog = New(cfg.MemMax, cfg.DiskMax, cfg.Dir, cfg.Name, global)
	if cfg.Create != nil {
		h.elog.SetCreate(cfg.Create)
	}
	if cfg.Budget != nil {
		cfg.Budget.Add(h)
	}
	return h
}

// Name is the session's id the hub was made for.
func (h *Hub) Name() string { return h.name }

// Seqs returns the oldest and newest seq the log holds.
func (h *Hub) Seqs() (first, last int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.elog.FirstSeq(), h.elog.LastSeq()
}

// Subscribers is the number of subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Append logs the next event — its seq is the log's last plus one, its
// frame what build makes of that seq — and queues the frame for the live
// subscribers; one whose reader is behind goes back to catching up. It
// never waits for a reader. It returns the frame (nil when the hub is
// released) and whether the memory budget is exceeded (the caller trims,
// Budget.Trim, without its own locks). The seq is taken and the frame
// built under the hub's lock, so events logged by two goroutines (an old
// claude process's last lines and its successor's first) keep their
// order, at one lock per event.
func (h *Hub) Append(build func(seq int64) []byte) (frame []byte, overBudget bool) {
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

func (h *Hub) sendEventLocked(sub *Subscription, seq int64, frame []byte) {
	switch sub.s.Event(seq, frame) {
	case Behind:
		// The reader is behind: it catches up from the log from seq on.
		sub.live, sub.wasLive, sub.next = false, true, seq
	case Gone:
		sub.live = false
	}
}

func (h *Hub) checkDiskLocked() {
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

// Push queues a frame that is not an event (in proxy, permission/request,
// permission/resolved, session/exited) for the live subscriptions and
// records it, in its place among the events, for those that fell behind
// after being live.
func (h *Hub) Push(frame []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sub := range h.subs {
		switch {
		case sub.live:
			sub.s.Push(frame)
		case sub.wasLive:
			h.addPendingLocked(sub, frame, false)
		}
	}
}

// PushState queues a state frame (the state of key) for the live
// subscriptions, records it in place for those that fell behind after
// being live, and notes that they were told the state of key. One
// catching up for the first time is told the state when it turns live
// (GoLive's extra), if it changed.
func (h *Hub) PushState(frame []byte, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sub := range h.subs {
		switch {
		case sub.live:
			sub.stateKey = key
			sub.s.Push(frame)
		case sub.wasLive:
			sub.stateKey = key
			h.addPendingLocked(sub, frame, true)
		}
	}
}

// addPendingLocked records frame for sub, which is behind, after the
// newest event. A state frame replaces a state frame recorded after the
// same event (the reader would see it replaced at once anyway). Over
// maxPendingPushBytes the reader is closed (Lagged) and the subscription
// records nothing more.
func (h *Hub) addPendingLocked(sub *Subscription, frame []byte, state bool) {
	after := h.elog.LastSeq()
	if n := len(sub.pending); state && n > 0 && sub.pending[n-1].state && sub.pending[n-1].after == after {
		sub.pendBytes += int64(len(frame)) - int64(len(sub.pending[n-1].data))
		sub.pending[n-1].data = frame
		return
	}
	if sub.pendBytes+int64(len(frame)) > maxPendingPushBytes {
		n, b := len(sub.pending), sub.pendBytes
		sub.pending, sub.pendBytes, sub.wasLive = nil, 0, false
		sub.s.Lagged(fmt.Sprintf("slow consumer: %d pushes (%d bytes) waiting while catching up on session %s", n, b, h.name))
		return
	}
	sub.pending = append(sub.pending, pendingPush{after: after, data: frame, state: state})
	sub.pendBytes += int64(len(frame))
}

// takePendingLocked appends to frames the pending pushes of sub that
// follow events before sub.next (the reader has those events) and
// forgets them.
func takePendingLocked(sub *Subscription, frames [][]byte) [][]byte {
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
// event comes any more, and a reader that subscribes later reads the rest
// from disk (the page cache) in chunks anyway.
const exitedMemBytes = 1 << 20

// SetExited marks the session exited: its log spills all but its last
// exitedMemBytes to disk, and what is left is the first the budget
// evicts.
func (h *Hub) SetExited() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.exited = true
	h.elog.TrimMem(min(h.elog.MemMax(), exitedMemBytes))
	h.checkDiskLocked()
}

// Subscribe subscribes sub (NewSubscription) under key (comparable: one
// subscription per key, in proxy the client; it replaces an earlier one
// of key) and queues, atomically with respect to new events: the reply
// (made by reply from the log's range; an error from it subscribes
// nothing and is returned), a gap frame if the log no longer reaches back
// to afterSeq. The reader then pulls the logged events (Pull) until the
// subscription turns live (GoLive). stateKey is the state the reply told.
func (h *Hub) Subscribe(key any, sub *Subscription, afterSeq int64, stateKey string, reply func(first, last int64) ([]byte, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	first, last := h.elog.FirstSeq(), h.elog.LastSeq()
	r, err := reply(first, last)
	if err != nil {
		return err
	}
	if old := h.subs[key]; old != nil {
		old.gone.Store(true)
		old.s.Forget()
	}
	sub.key, sub.next, sub.stateKey = key, max(afterSeq+1, first), stateKey
	sub.s.Send(r)
	if afterSeq+1 < first {
		if gap := h.gapFrame(first); gap != nil {
			sub.s.Push(gap)
		}
	}
	h.subs[key] = sub
	sub.s.CatchUp()
	return nil
}

func (h *Hub) gapFrame(first int64) []byte {
	if h.gap == nil {
		return nil
	}
	return h.gap(first)
}

// Chunks a reader pulls at a time while a subscription catches up.
const (
	pullFrames = 256
	pullBytes  = 4 << 20
)

// Pull returns the next logged frames of a catching-up subscription (a
// gap frame first when the log lost some it needed), read from memory or
// disk, with the pending pushes in their places (the chunk ends at the
// event the oldest pending push follows), and whether it has reached the
// end of the log. Only sub's reader calls it (in proxy, its client's
// write pump), so nobody else moves sub.next meanwhile. Disk reads happen
// without the hub's lock.
func (h *Hub) Pull(sub *Subscription) (frames [][]byte, atEnd bool) {
	h.mu.Lock()
	if sub.live || sub.gone.Load() || h.subs[sub.key] != sub {
		h.mu.Unlock()
		return nil, false
	}
	if first := h.elog.FirstSeq(); sub.next < first {
		// Dropped from the log (disk budget) while this reader was behind.
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

// GoLive turns a subscription that has pulled the whole log live, unless
// events came meanwhile (it returns false; the reader pulls again). It
// returns the pushes still pending (made since the last pull; they follow
// every event), then what extra returns: what the subscriber gets on
// turning live (in proxy: state, pending permission requests, exit
// report), called with the hub's lock held. The caller holds its own
// lock (the session's), so nothing it pushes can come between.
func (h *Hub) GoLive(sub *Subscription, extra func(sub *Subscription) [][]byte) ([][]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub.live || sub.gone.Load() || h.subs[sub.key] != sub || sub.next <= h.elog.LastSeq() {
		return nil, false
	}
	sub.live = true
	sub.s.CaughtUp()
	frames := takePendingLocked(sub, nil)
	return append(frames, extra(sub)...), true
}

// Unsubscribe ends key's subscription; its queued frames are dropped. It
// reports whether there was one.
func (h *Hub) Unsubscribe(key any) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	sub := h.subs[key]
	if sub == nil {
		return false
	}
	sub.gone.Store(true)
	delete(h.subs, key)
	sub.s.Forget()
	return true
}

// Release forgets every subscription (their queued frames still go out)
// and frees the log: memory and spill files. The hub takes no more
// events. It takes the budget's lock: no session lock may be held.
func (h *Hub) Release() {
	h.mu.Lock()
	for _, sub := range h.subs {
		sub.s.Forget()
	}
	h.subs = map[any]*Subscription{}
	h.elog.Release()
	h.released = true
	h.mu.Unlock()
	if h.budget != nil {
		h.budget.Remove(h)
	}
}

// Spill moves the oldest frames in memory to disk until memory holds at
// most keep bytes; it returns how many bytes it freed (Member).
func (h *Hub) Spill(keep int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	before := h.elog.MemBytes()
	h.elog.TrimMem(keep)
	h.checkDiskLocked()
	return before - h.elog.MemBytes()
}

// EvictionInfo is for the budget (Member).
func (h *Hub) EvictionInfo() (exited bool, mem, oldest int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exited, h.elog.MemBytes(), h.elog.OldestStamp()
}

// LogBytes is the memory and disk bytes of the log (Member).
func (h *Hub) LogBytes() (mem, disk int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.elog.MemBytes(), h.elog.DiskBytes()
}

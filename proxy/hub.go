package proxy

import (
	"log/slog"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/eventlog"
)

// hub is a session's eventlog.Hub (its event log and its subscriptions;
// see eventlog's doc) with what the proxy adds: session/gap frames, the
// subscribe reply's check of afterSeq, and subscriptions of clients.
type hub struct {
	*eventlog.Hub
	session string
}

func newHub(session string, log *slog.Logger, budget *eventlog.Budget, memMax, diskMax int64, dir func() string) *hub {
	return newHubWith(eventlog.HubConfig{Name: session, Log: log, Budget: budget, MemMax: memMax, DiskMax: diskMax, Dir: dir})
}

func newHubWith(cfg eventlog.HubConfig) *hub {
	session, log := cfg.Name, cfg.Log
	cfg.Gap = func(first int64) []byte {
		gap, err := protocol.EncodePush(protocol.TypeSessionGap, protocol.SessionGap{Session: session, FirstSeq: first})
		if err != nil {
			log.Error("session gap", "err", err)
			return nil
		}
		return gap
	}
	return &hub{Hub: eventlog.NewHub(cfg), session: session}
}

// newSessionHub is the hub of a new session of s: its replay log spills
// to s's spool (through Options.spillCreate when a test set it) and its
// failed spills are counted in s's metrics.
func (s *Server) newSessionHub(id string) *hub {
	return newHubWith(eventlog.HubConfig{Name: id, Log: s.log.With("session", id), Budget: s.logs,
		MemMax: s.opts.ReplayBytes, DiskMax: max(s.opts.ReplayDiskBytes, 0), Dir: s.spool.Dir,
		Create: s.opts.spillCreate, SpillFailed: s.metrics.SpillFailed})
}

// subscription is one client's subscription to one session: the
// eventlog.Subscriber of its hub (it queues frames on the client's
// connection) and the wsconn.Source of its frames there (the client's
// write pump pulls it while it catches up).
type subscription struct {
	c  *client
	s  *Session
	es *eventlog.Subscription

	// What the session's liveFramesLocked reads and sets, copied from and
	// back to es within GoLive's extra (hub.goLive), under the hub's lock.
	wasLive   bool
	sentState string
}

func (h *hub) seqs() (first, last int64)                          { return h.Seqs() }
func (h *hub) subscribers() int                                   { return h.Subscribers() }
func (h *hub) append(build func(seq int64) []byte) ([]byte, bool) { return h.Append(build) }
func (h *hub) push(frame []byte)                                  { h.Push(frame) }
func (h *hub) pushState(frame []byte, key string)                 { h.PushState(frame, key) }
func (h *hub) setExited()                                         { h.SetExited() }
func (h *hub) release()                                           { h.Release() }
func (h *hub) unsubscribe(c *client) bool                         { return h.Unsubscribe(c) }
func (h *hub) pull(sub *subscription) ([][]byte, bool)            { return h.Pull(sub.es) }

// subscribe subscribes c to s (replacing an earlier subscription of c);
// see eventlog.Hub.Subscribe. An afterSeq beyond the log's last seq is
// refused.
func (h *hub) subscribe(c *client, s *Session, afterSeq int64, stateKey string, reply func(first, last int64) ([]byte, error)) error {
	sub := &subscription{c: c, s: s}
	sub.es = eventlog.NewSubscription(sub)
	return h.Subscribe(c, sub.es, afterSeq, stateKey, func(first, last int64) ([]byte, error) {
		if afterSeq > last {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "session/subscribe: data.afterSeq: %d is beyond the last seq of session %s (%d): events are numbered anew when ccproxy restarts", afterSeq, h.session, last)
		}
		return reply(first, last)
	})
}

// goLive is eventlog.Hub.GoLive with extra taking the subscription.
func (h *hub) goLive(sub *subscription, extra func(sub *subscription) [][]byte) ([][]byte, bool) {
	return h.GoLive(sub.es, func(es *eventlog.Subscription) [][]byte {
		sub.wasLive, sub.sentState = es.WasLive(), es.StateKey()
		frames := extra(sub)
		es.SetStateKey(sub.sentState)
		return frames
	})
}

// Send queues the subscribe reply (eventlog.Subscriber).
func (sub *subscription) Send(frame []byte) { sub.c.enqueue(outFrame{data: frame}) }

// Push queues a push of the subscription (eventlog.Subscriber).
func (sub *subscription) Push(frame []byte) { sub.c.enqueue(outFrame{data: frame, sub: sub}) }

// Event queues an event of the live subscription (eventlog.Subscriber).
// One that does not fit puts the subscription on the client's catch-up
// list (wsconn.Conn.EnqueueEvent): counted, and logged the first time.
func (sub *subscription) Event(seq int64, frame []byte) eventlog.Delivery {
	switch sub.c.enqueueEvent(outFrame{data: frame, sub: sub}) {
	case queueBehind:
		sub.c.srv.metrics.SubscriptionBehind()
		if !sub.es.WasLive() { // the hub's lock is held
			sub.c.log.Debug("client fell behind; it catches up from the replay log", "session", sub.s.id, "seq", seq)
		}
		return eventlog.Behind
	case queueDead:
		return eventlog.Gone
	}
	return eventlog.Delivered
}

// CatchUp, CaughtUp, Forget and Lagged are eventlog.Subscriber's.
func (sub *subscription) CatchUp()             { sub.c.addSub(sub) }
func (sub *subscription) CaughtUp()            { sub.c.catchupDone(sub) }
func (sub *subscription) Forget()              { sub.c.dropSub(sub) }
func (sub *subscription) Lagged(reason string) { sub.c.kill(websocket.ClosePolicyViolation, reason) }

// Pull returns the next frames of the subscription, catching up
// (wsconn.Source: the client's write pump calls it).
func (sub *subscription) Pull() [][]byte { return sub.s.pull(sub) }

// Gone reports that the subscription ended (wsconn.Source): its queued
// frames are dropped.
func (sub *subscription) Gone() bool { return sub.es.Gone() }

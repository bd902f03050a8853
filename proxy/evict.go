package proxy

import (
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// Room for a new session (SPEC §5.2). MaxSessions bounds the sessions
// that cost a claude process: those that count against the limit
// (countsAgainstLimit) and the session/creates under way (Server.starting).
// An exited session, kept only for its replay log, does not count; the
// sessions kept — counted and exited ones — are at most MaxSessions
// together, so a create that finds them at the limit evicts the one that
// exited longest ago: it is taken out of the registry under Server.mu,
// with the create's slot reserved in the same critical section (so two
// creates never take the same room), and forgotten like a reaped one
// (subscribers get session/state closed, reason evicted) before claude
// starts.

// countsAgainstLimit reports whether the session takes one of
// MaxSessions' slots: it does while its claude runs or is being started,
// restarted, stopped or resumed; an exited one does not, nor a suspended
// one whose claude is stopped (proxy/idle), which, since it has not
// exited, is never evicted either.
func (s *Session) countsAgainstLimit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.proc.exited && !s.suspend.AtRestLocked()
}

// makeRoom says whether a new session may start among sessions, the
// registry (Server.mu held, before the caller reserves its slot), with
// starting creates under way and at most limit: an error when the counted
// sessions fill limit; otherwise the session to evict to make room, already
// taken out of sessions (nil when there is room without), for the caller
// to pass to evict once Server.mu is released.
func makeRoom(sessions map[string]*Session, starting, limit int) (*Session, error) {
	counted, kept := starting, starting
	var victim *Session
	var victimAt time.Time
	for _, sess := range sessions {
		if sess.countsAgainstLimit() {
			counted++
			kept++
			continue
		}
		at, ok := sess.exitTime()
		if !ok {
			continue // neither counted nor evictable
		}
		kept++
		if victim == nil || at.Before(victimAt) {
			victim, victimAt = sess, at
		}
	}
	if counted >= limit {
		return nil, protocol.Errorf(protocol.CodeLimitExceeded, "session/create: maxSessions (%d) sessions are running or starting (exited ones make room); close one first", limit)
	}
	if kept < limit || victim == nil {
		return nil, nil
	}
	delete(sessions, victim.id)
	return victim, nil
}

// evict forgets a session makeRoom took out of the registry (nil: none):
// its subscribers get session/state closed, reason evicted, and its log
// is freed, as a reap does.
func evict(victim *Session) {
	if victim == nil {
		return
	}
	victim.log.Info("forgetting the exited session: a new session needs its room")
	victim.reap(protocol.ReasonEvicted)
}

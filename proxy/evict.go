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
// MaxSessions' slots: it does while its claude runs or is being started
// or restarted; an exited one does not. (A session suspended while idle,
// its claude stopped, will not count either: it is answered here, and,
// since it has not exited, it is never evicted.)
func (s *Session) countsAgainstLimit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.proc.exited
}

// roomLocked says whether a new session may start (s.mu held, before the
// caller reserves its slot with s.starting++): an error when the counted
// sessions fill MaxSessions; otherwise the session to evict to make room,
// already taken out of the registry (nil when there is room without), for
// the caller to pass to evict once s.mu is released.
func (s *Server) roomLocked() (*Session, error) {
	counted, kept := s.starting, s.starting
	var victim *Session
	var victimAt time.Time
	for _, sess := range s.sessions {
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
	if counted >= s.opts.MaxSessions {
		return nil, protocol.Errorf(protocol.CodeLimitExceeded, "session/create: maxSessions (%d) sessions are running or starting (exited ones make room); close one first", s.opts.MaxSessions)
	}
	if kept < s.opts.MaxSessions || victim == nil {
		return nil, nil
	}
	delete(s.sessions, victim.id)
	return victim, nil
}

// evict forgets a session roomLocked took out of the registry: its
// subscribers get session/state closed, reason evicted, and its log is
// freed, as a reap does.
func (s *Server) evict(victim *Session) {
	if victim == nil {
		return
	}
	victim.log.Info("forgetting the exited session: a new session needs its room", "maxSessions", s.opts.MaxSessions)
	victim.reap(protocol.ReasonEvicted)
}

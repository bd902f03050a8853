package proxy

// The suspend part of a Session: package proxy/idle (when an idle session
// is suspended, when it resumes) behind its idle.Session interface
// (idleSession): here is what the session does when suspended (claude
// out of use as in a restart, restart.go, and stopped in a goroutine of
// the session), resumed (Session.restart, in a goroutine of the session)
// or closed while suspended. The Suspender's fields are guarded by
// Session.mu (idle.New is given it).

import (
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/idle"
)

// newSuspender is the suspend part of s (idle timeout ≤ 0: never).
func newSuspender(s *Session) *idle.Suspender {
	return idle.New(&s.mu, idleSession{s}, idle.Config{Timeout: s.env.opts.idleTimeout, After: s.env.opts.idleAfter, Log: s.log})
}

// idleSession is the session as its suspend part sees it (idle.Session);
// every method is called with Session.mu held.
type idleSession struct{ s *Session }

func (a idleSession) Status() idle.Status {
	s := a.s
	p := s.proc.cur
	quiet := s.state == protocol.StateIdle && !s.proc.gone() && p != nil && p.initialized &&
		!s.restarts.active && !s.restarts.wanted && !s.restarts.flushing && s.restarts.held.Len() == 0 &&
		!s.turns.Busy() && s.broker.Pending() == 0 && p.cli.Pending() == 0
	return idle.Status{Idle: s.state == protocol.StateIdle, Quiet: quiet, Exited: s.proc.exited, Gone: s.proc.gone(), Held: s.restarts.held.Len() > 0}
}

// Suspend stops claude in a goroutine of the session (stdin EOF,
// CloseGrace, SIGTERM, TermGrace, SIGKILL, as a close); subscribers see
// session/state suspended at once.
func (a idleSession) Suspend(why string) {
	s := a.s
	s.restarts.active = true // no process to run turns: they are held, the mode and model kept (restart.go)
	s.turns.Reset()
	s.setStateLocked(protocol.StateSuspended, why)
	s.env.metrics.Suspended()
	old := s.proc.cur
	s.log.Info("suspending an idle session: stopping claude", "pid", old.cli.PID(), "idle", s.env.opts.idleTimeout)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		old.cli.Close()
		<-old.finished
		s.mu.Lock()
		after := s.suspend.StoppedLocked()
		s.mu.Unlock()
		if after != nil {
			after()
		}
	}()
}

// Resume replaces the stopped claude by a new one (the restart path).
func (a idleSession) Resume() {
	s := a.s
	old := s.proc.cur
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.restart(old)
	}()
}

// End reports the exit of the suspended session being closed: the exit of
// its last claude, with the close's reason; the turns held meanwhile are
// answered session_exited by after.
func (a idleSession) End() (after func()) {
	s := a.s
	s.restarts.active = false
	ex := s.proc.cur.cli.Exit()
	s.reportExitLocked(ex.Code, ex.Signal, "", s.proc.closing)
	held := s.restarts.held.Take()
	return func() { held.Reply(errHeldExited(s.id)) }
}

// errHeldExited answers the turns held for session id, which has exited.
func errHeldExited(id string) error {
	return protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited", id)
}

package proxy

// session/interrupt, and the turns the proxy holds for a claude that is
// not ready: one still starting (it has not answered initialize) or being
// replaced by a restart (restart.go). A held turn has not reached claude,
// so an interrupt withdraws it at once: its session/send is answered
// cancelled, and the interrupt is answered by the proxy itself when claude
// runs nothing yet. Measured on the real CLI (docs/CLI-NOTES.md "A turn
// and an interrupt written while claude starts"): claude reads nothing of
// its stdin until it is ready, so a turn written to a starting claude and
// an interrupt after it were answered only when claude was ready (1–2 s,
// more on a loaded machine), and the turn then started and ended at once.
// Fields: none of its own; it works on restarts.held (package
// proxy/held) and restarts.writing under Session.mu.

import (
	"encoding/json"
	"errors"

	"github.com/ccproxy/ccproxy/protocol"
)

// holds reports whether a turn sent now is held rather than written to
// p, the session's claude: it is being replaced, has not answered
// initialize yet, or earlier held turns are still waiting or being written
// (they go first). Session.mu held.
func (r *restarts) holds(p *claudeProc) bool {
	return r.active || r.flushing || r.held.Len() > 0 || p == nil || !p.initialized
}

// withdrawHeld withdraws the turns sess holds (each held session/send is
// answered cancelled) and returns what the interrupt must then do: ask
// p, the current claude, after writing is closed (a held turn being
// written to p right now: the interrupt must follow it); p nil: nothing
// runs (claude is starting or restarting), the proxy answers the
// interrupt itself. An exited session is session_exited.
func withdrawHeld(sess *Session) (p *claudeProc, writing <-chan struct{}, err error) {
	sess.mu.Lock()
	if sess.proc.gone() {
		sess.mu.Unlock()
		return nil, nil, protocol.Errorf(protocol.CodeSessionExited, "session/interrupt: session %s has exited", sess.id)
	}
	held := sess.restarts.held.Take()
	p, writing = sess.proc.cur, sess.restarts.writing
	if sess.restarts.active || p == nil || !p.initialized {
		p, writing = nil, nil
	}
	sess.mu.Unlock()
	if len(held) > 0 {
		sess.log.Info("interrupt: withdrew the turns held for claude", "turns", len(held))
	}
	held.Reply(protocol.Errorf(protocol.CodeCancelled, "session/send: the turn was withdrawn by session/interrupt before claude got it (session %s)", sess.id))
	return p, writing, nil
}

func (s *Server) reqInterrupt(c *client, id json.RawMessage, d *protocol.SessionInterrupt) {
	sess, err := s.session(d.Session)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	p, writing, err := withdrawHeld(sess)
	switch {
	case err != nil:
		c.replyErr(id, err)
		return
	case p == nil:
		c.reply(id, nil) // claude is starting or restarting: it runs nothing
		return
	case writing != nil:
		// A held turn is being written: the interrupt follows it.
		c.async(func() {
			select {
			case <-writing:
			case <-c.ctx.Done():
				return
			}
			s.askInterrupt(c, id, sess, p, false)
		})
		return
	}
	s.askInterrupt(c, id, sess, p, true)
}

// askInterrupt sends claude (process p) the control request interrupt and
// answers the request id with claude's answer: in the background when
// async, else in the calling goroutine (one of c's async ones).
func (s *Server) askInterrupt(c *client, id json.RawMessage, sess *Session, p *claudeProc, async bool) {
	ch := make(chan controlResult, 1)
	// Written now, in request order; the answer is awaited in the background.
	rid, err := sess.control(p, "interrupt", nil, func(r controlResult) { ch <- r })
	if err != nil {
		c.replyErr(id, controlError("session/interrupt", err))
		return
	}
	wait := func() {
		select {
		case r := <-ch:
			switch {
			case errors.Is(r.err, errControlTimeout):
				c.replyErr(id, protocol.Errorf(protocol.CodeTimeout, "session/interrupt: claude did not acknowledge the interrupt within %v", s.opts.ControlTimeout))
			case r.err != nil:
				c.replyErr(id, controlError("session/interrupt", r.err))
			default:
				c.reply(id, nil)
			}
		case <-c.ctx.Done():
			p.forget(rid) // nobody to answer
		}
	}
	if async {
		c.async(wait)
		return
	}
	wait()
}

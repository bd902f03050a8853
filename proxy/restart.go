package proxy

// The restarts part of a Session: claude is restarted with --resume
// between turns when it refuses a live MCP change or cannot make it, and
// the user turns sent meanwhile are held for the new process, then
// written to it once it has initialized (the flush). Fields (type
// restarts): wanted, active, held, flushing, all guarded by Session.mu (a
// part of the Session, not a lock of its own). The restart and the flush
// each run in a goroutine of the session (its wg).

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/held"
)

// restarts is the restart part of a session. Guarded by Session.mu.
type restarts struct {
	wanted   bool          // a restart waits for the turn in flight to end
	active   bool          // the process is being replaced
	held     held.Queue    // turns waiting for a claude that is not ready (package proxy/held)
	flushing bool          // held turns are being written
	writing  chan struct{} // non-nil while a held turn taken from held is being written; closed after (interrupt.go)

	// A rewind (rewind.go) restarts with these: at is the message the
	// conversation resumes at (--resume-session-at), fresh starts a new
	// conversation (the rewind went to its first message), why is the
	// reason of the state push once the new process runs. They stay until
	// the new process ends a turn (usage.go: noteResult), so a restart
	// before then resumes at the same place.
	at    string
	fresh bool
	why   string
}

// requestRestart restarts claude with --resume between turns, because it
// refused a live MCP change or cannot make it (a server it was launched
// with left the configuration: mcpsession.Part.Apply).
func (s *Session) requestRestart(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.exited || s.proc.closing != "" || s.restarts.active {
		return
	}
	s.log.Info("restarting claude between turns", "why", why)
	s.restarts.wanted = true
	if !s.turns.Busy() {
		s.beginRestartLocked()
	}
}

func (s *Session) beginRestartLocked() {
	if s.restarts.active || s.proc.exited || s.proc.closing != "" {
		return
	}
	s.restarts.wanted = false
	s.restarts.active = true
	s.turns.Reset() // none in flight (busy was false), and the new process has echoed nothing yet
	s.setStateLocked(protocol.StateRestarting, "applying an MCP configuration change")
	old := s.proc.cur
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.restart(old) }()
}

// restart replaces old by a new claude resuming the same conversation;
// it is also the resume of a suspended session (proxy/idle), old then
// stopped already.
func (s *Session) restart(old *claudeProc) {
	old.cli.Close()
	<-old.finished

	s.mu.Lock()
	// The conversation claude reported, or, before its first turn, the one
	// the session was created to resume.
	resume := s.claudeID
	if resume == "" && !s.restarts.fresh {
		resume = s.cfg.resume
	}
	closing := s.proc.closing
	s.mu.Unlock()
	fail := func(msg string) {
		ex := old.cli.Exit()
		code, sig := ex.Code, ex.Signal
		s.mu.Lock()
		reason := s.proc.closing
		if reason == "" {
			reason = protocol.ExitExited
		}
		s.restarts.active = false
		s.suspend.ClearLocked()
		s.reportExitLocked(code, sig, msg, reason)
		held := s.restarts.held.Take()
		s.mu.Unlock()
		held.Reply(errHeldExited(s.id))
	}
	if closing != "" {
		fail("")
		return
	}
	claude, err := s.env.findClaude()
	if err != nil {
		s.log.Error("restart: claude unavailable", "err", err)
		fail("ccproxy could not restart claude: " + err.Error())
		return
	}
	p, err := s.spawn(claude, resume)
	if err != nil {
		s.log.Error("restart: starting claude", "err", err)
		fail("ccproxy could not restart claude: " + spawnErrorMessage(err)) // what session/create would say
		return
	}
	s.mu.Lock()
	if s.proc.closing != "" {
		s.mu.Unlock()
		// Closed meanwhile: nobody else owns the new process.
		reap(p)
		fail("")
		return
	}
	s.proc.cur = p
	s.restarts.active = false
	why := "resumed after a suspend"
	if s.suspend.ResumedLocked() {
		s.env.metrics.Resumed()
	} else {
		s.env.metrics.Restarted()
		why = "resumed with the new MCP configuration"
	}
	s.state = "" // so the next line announces it
	s.setStateLocked(protocol.StateStarting, cmp.Or(s.restarts.why, why))
	s.mu.Unlock()
	s.run(p, nil)
	s.mcp.ReapplyOff() // servers mcp/toggle disabled in this session (proxy/mcpsession)
}

// onInitialized notes that p answered initialize (or failed to): the
// session leaves "starting", and the turns held during a restart go to p —
// unless p is already being replaced (a second restart that began while p
// initialized): they wait for its successor then.
func (s *Session) onInitialized(p *claudeProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.initialized = true
	if s.proc.cur == p && s.state == protocol.StateStarting {
		s.setStateLocked(s.turns.StateName(), "")
	}
	catchUpLocked(s, p) // a mode or model chosen while p started
	s.flushHeldLocked()
}

// flushHeldLocked starts writing the held turns to the session's process
// if it has initialized, is not being replaced, and nobody writes them
// already.
func (s *Session) flushHeldLocked() {
	p := s.proc.cur
	if p == nil || !p.initialized || s.restarts.active || s.restarts.flushing || s.proc.exited || s.restarts.held.Len() == 0 {
		return
	}
	s.restarts.flushing = true
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.flushHeld(p) }()
}

// flushHeld writes the turns held during a restart to p, in order,
// including those sent while it runs. It stops when p is being replaced or
// was: the rest go to p's successor once it has initialized (at once if it
// has).
func (s *Session) flushHeld(p *claudeProc) {
	for {
		s.mu.Lock()
		if s.restarts.held.Len() == 0 || s.proc.exited || s.proc.cur != p || s.restarts.active {
			s.restarts.flushing = false
			s.flushHeldLocked()
			s.mu.Unlock()
			return
		}
		h, _ := s.restarts.held.Pop()
		k := s.turns.Queue(h.Line)
		s.settleStateLocked()
		writing := make(chan struct{})
		s.restarts.writing = writing
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.env.opts.controlTimeout)
		err := s.writeTurn(ctx, p, h.Line, k)
		cancel()
		s.mu.Lock()
		s.restarts.writing = nil
		s.mu.Unlock()
		close(writing) // an interrupt that came meanwhile goes after the turn
		h.Reply(err)
	}
}

// catchUpLocked sends p, which has just initialized, the permission mode
// and the model chosen while it was launched (during a resume or a
// restart, setPermissionMode and setModel keep them for the new process:
// one that was already being launched was launched with the earlier
// ones). They are written to its stdin before the held turns, so those run
// in them; claude's refusal is logged (the mode claude reports then
// comes with its next system/init).
func catchUpLocked(s *Session, p *claudeProc) {
	if s.proc.cur != p || p.cli == nil || s.proc.gone() {
		return
	}
	logErr := func(what string) func(json.RawMessage, error) {
		return func(_ json.RawMessage, err error) {
			if err != nil {
				s.log.Warn("the new claude did not take the "+what+" chosen while it started", "err", err)
			}
		}
	}
	if mode := s.broker.Mode(); mode != p.mode && mode != "" {
		_, _ = p.cli.CallAsync("set_permission_mode", map[string]any{"mode": mode}, logErr("permission mode"))
	}
	if model := s.models.Chosen(); model != p.model && model != "" {
		_, _ = p.cli.CallAsync("set_model", map[string]any{"model": model}, logErr("model"))
	}
}

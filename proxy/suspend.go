package proxy

// The suspend part of a Session: a session idle for Options.IdleTimeout
// (no turn running or queued, no permission asked, no control request
// pending, no restart under way or wanted, no held turn) has its claude
// stopped and is "suspended"; its next session/send, setPermissionMode or
// setModel resumes it. A suspend is the first half of a restart (restart.go)
// whose second half waits for the next use: while suspended the session has
// no process it runs, so restarts.active is set as during a restart, and
// every path that handles a restart handles a suspended session the same
// way (turns held, the mode and model kept for the new claude, interrupt
// answered at once, MCP changes left to the new process). The resume is
// Session.restart: claude --resume of the session's Claude session, in its
// cwd, with its chosen model, its permission mode, the MCP configuration in
// force and its MCP toggles re-applied; the held turns are written once it
// has initialized. The hub and its seq numbers are the session's, so seq
// numbers continue, and the log holds each event once (the resumed claude
// replays nothing of the conversation: docs/CLI-NOTES.md).
//
// Fields (type suspension): timeout and after are set when the session is
// made and never change; suspended, stopping, wanted, gen and stop are
// guarded by Session.mu (a part of the Session, not a lock of its own).
//
// Goroutines: the idle timer's callback (counted in suspension.wg from when
// it is armed until it runs or is stopped; Session.close stops it and waits
// for wg), and the goroutine that stops claude and, when a use came
// meanwhile, resumes it (the session's wg; a resume started later is a
// restart goroutine, also in the session's wg).

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// suspension is the suspend part of a session.
type suspension struct {
	s       *Session
	timeout time.Duration                                      // idle this long: suspended (≤ 0: never)
	after   func(d time.Duration, f func()) (stop func() bool) // arms a timer (time.AfterFunc's)
	wg      sync.WaitGroup                                     // armed timers: Add when armed, Done when run or stopped

	// Guarded by Session.mu.
	suspended bool        // claude was stopped while idle (restarts.active is set too); cleared when a resume has launched the new claude
	stopping  bool        // a goroutine stops claude or starts the new one: a use waits for it (wanted)
	resuming  bool        // the new claude is being started (restart)
	wanted    bool        // a use came while claude was being stopped: resume once it has
	gen       uint64      // counts arms and disarms: a timer of an earlier arm does nothing
	stop      func() bool // the armed timer's Stop (nil: none armed)
}

// newSuspension is the suspend part of s (timeout ≤ 0: never).
func newSuspension(s *Session, timeout time.Duration, after func(time.Duration, func()) func() bool) suspension {
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return suspension{s: s, timeout: timeout, after: after}
}

// noteStateLocked arms the idle timer when the session turns idle and
// disarms it when it leaves idle (Session.setStateLocked calls it).
func (u *suspension) noteStateLocked() {
	if u.s.state == protocol.StateIdle {
		u.armLocked()
	} else {
		u.disarmLocked()
	}
}

func (u *suspension) armLocked() {
	u.disarmLocked()
	if u.timeout <= 0 || u.s.proc.gone() {
		return
	}
	g := u.gen
	u.wg.Add(1)
	u.stop = u.after(u.timeout, func() {
		defer u.wg.Done()
		u.fired(g)
	})
}

// disarmLocked stops the armed timer; one already firing finds its
// generation past and does nothing.
func (u *suspension) disarmLocked() {
	u.gen++
	if u.stop != nil {
		if u.stop() {
			u.wg.Done()
		}
		u.stop = nil
	}
}

// quietLocked reports whether the session may be suspended now.
func (u *suspension) quietLocked() bool {
	s := u.s
	p := s.proc.cur
	return s.state == protocol.StateIdle && !s.proc.gone() && p != nil && p.initialized &&
		!s.restarts.active && !s.restarts.wanted && !s.restarts.flushing && len(s.restarts.held) == 0 &&
		!s.turns.Busy() && s.broker.Pending() == 0 && p.cli.Pending() == 0
}

// fired is the idle timer of generation g: it suspends the session if it
// is quiet; an idle session that is not (a permission asked outside a
// turn, a control request pending) waits another IdleTimeout.
func (u *suspension) fired(g uint64) {
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if g != u.gen {
		return // disarmed or re-armed since
	}
	u.stop = nil
	if !u.quietLocked() {
		if s.state == protocol.StateIdle {
			u.armLocked()
		}
		return
	}
	u.beginLocked()
}

// beginLocked suspends the session: claude is stopped in a goroutine of
// the session (stdin EOF, CloseGrace, SIGTERM, TermGrace, SIGKILL, as a
// close), and subscribers see session/state suspended at once.
func (u *suspension) beginLocked() {
	s := u.s
	s.restarts.active = true // no process to run turns: they are held, the mode and model kept (restart.go)
	u.suspended, u.stopping, u.wanted = true, true, false
	s.turns.Reset()
	s.setStateLocked(protocol.StateSuspended, "idle for "+u.timeout.String()+": claude stopped; the next turn resumes it")
	s.env.metrics.Suspended()
	old := s.proc.cur
	s.log.Info("suspending an idle session: stopping claude", "pid", old.cli.PID(), "idle", u.timeout)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		u.stopClaude(old)
	}()
}

// stopClaude stops old, the process of the session being suspended; a use
// that came meanwhile (a held turn, a mode or model chosen) resumes the
// session at once, a close meanwhile ends it.
func (u *suspension) stopClaude(old *claudeProc) {
	s := u.s
	old.cli.Close()
	<-old.finished
	s.mu.Lock()
	switch {
	case s.proc.exited: // closed meanwhile, and its exit reported (onExit)
		s.restarts.active, u.suspended, u.stopping = false, false, false
		s.mu.Unlock()
		return
	case s.proc.closing != "":
		held := u.endLocked(old)
		s.mu.Unlock()
		replyExited(s, held)
		return
	case u.wanted || len(s.restarts.held) > 0:
		u.resuming = true
		s.mu.Unlock()
		s.restart(old) // the resume (it keeps stopping until the new claude runs)
		return
	}
	u.stopping = false
	s.mu.Unlock()
	s.log.Info("suspended an idle session: claude stopped; its next turn resumes it")
}

// wakeLocked resumes a suspended session (a turn was held, or a mode or
// model chosen): at once when claude is stopped, else once it is.
func (u *suspension) wakeLocked() {
	s := u.s
	switch {
	case !u.suspended || s.proc.gone():
		return
	case u.stopping:
		u.wanted = true
		return
	}
	u.stopping, u.resuming = true, true
	old := s.proc.cur
	s.log.Info("resuming a suspended session")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.restart(old)
	}()
}

// catchUpLocked sends p, which has just initialized, the permission mode
// and the model chosen while it was launched (during a resume or a
// restart, setPermissionMode and setModel keep them for the new process:
// one that was already being launched was launched with the earlier
// ones). They are written to its stdin before the held turns, so those run
// in them; claude's refusal is logged (the mode claude reports then
// comes with its next system/init).
func (u *suspension) catchUpLocked(p *claudeProc) {
	s := u.s
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

// resumedLocked notes that restart has launched the suspended session's
// new claude (false: the session was restarting, not suspended).
func (u *suspension) resumedLocked() bool {
	was := u.suspended
	u.clearLocked()
	if was {
		u.s.env.metrics.Resumed()
	}
	return was
}

// clearLocked notes that the session is no longer suspended: resumed, or
// ended.
func (u *suspension) clearLocked() {
	u.suspended, u.stopping, u.wanted, u.resuming = false, false, false, false
}

// closeLocked is Session.close's part (with s.proc.closing set): the timer
// is stopped, and a suspended session with nothing under way (no
// goroutine of its own to report it) has its exit reported now.
func (u *suspension) closeLocked() {
	u.disarmLocked()
	if u.suspended && !u.stopping && !u.s.proc.exited {
		u.endLocked(u.s.proc.cur) // nothing held: a held turn resumes the session
	}
}

// endLocked reports the exit of a suspended session being closed: the
// exit of its last claude, with the close's reason. It returns the turns
// held meanwhile, for the caller to answer once the lock is released.
func (u *suspension) endLocked(old *claudeProc) []heldTurn {
	s := u.s
	s.restarts.active = false
	u.clearLocked()
	ex := old.cli.Exit()
	s.reportExitLocked(ex.Code, ex.Signal, "", s.proc.closing)
	held := s.restarts.held
	s.restarts.held = nil
	return held
}

// replyExited answers turns held for a session that has exited.
func replyExited(s *Session, held []heldTurn) {
	for _, h := range held {
		h.reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited", s.id))
	}
}

// atRestLocked reports whether the session is suspended and no new claude
// is being started for it: it does not count against MaxSessions
// (evict.go), its claude stopping or stopped.
func (u *suspension) atRestLocked() bool { return u.suspended && !u.resuming }

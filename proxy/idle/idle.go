package idle

import (
	"log/slog"
	"sync"
	"time"
)

// Status is what the suspend part asks of its session's state.
type Status struct {
	Idle   bool // the session is idle
	Quiet  bool // idle with nothing under way: it may be suspended now (see the package's doc)
	Exited bool // its exit was reported
	Gone   bool // it has exited or is being closed: it takes no more work
	Held   bool // turns are held for its next claude
}

// Session is the session as its suspend part sees it. Every method is
// called with the session's lock held.
type Session interface {
	// Status says where the session is.
	Status() Status
	// Suspend takes the session's claude out of use as a restart does
	// (turns held, the mode and model kept), tells its subscribers the
	// session is suspended (why), and in a goroutine of the session stops
	// that claude (stdin EOF, grace, SIGTERM, grace, SIGKILL), waits for
	// its end and then calls StoppedLocked.
	Suspend(why string)
	// Resume starts, in a goroutine of the session, its new claude (its
	// restart path, claude --resume), which calls ResumedLocked once
	// launched.
	Resume()
	// End reports the exit of the suspended session being closed (its
	// last claude's, with the close's reason). The turns held meanwhile
	// are answered by after, to be called once the lock is released.
	End() (after func())
}

// Config is what a Suspender is made with.
type Config struct {
	// Timeout: idle this long, the session is suspended (≤ 0: never).
	Timeout time.Duration
	// After arms a timer (time.AfterFunc's, by default) and returns its
	// Stop: tests fire idleness on demand with it.
	After func(d time.Duration, f func()) (stop func() bool)
	Log   *slog.Logger
}

// Suspender is the suspend part of a session.
type Suspender struct {
	mu   *sync.Mutex // the session's lock
	sess Session
	cfg  Config
	wg   sync.WaitGroup // armed timers: Add when armed, Done when run or stopped

	// Guarded by mu.
	suspended bool        // claude was stopped while idle; cleared when a resume has launched the new claude
	stopping  bool        // claude is being stopped or the new one started: a use waits for it (wanted)
	resuming  bool        // the new claude is being started
	wanted    bool        // a use came while claude was being stopped: resume once it has
	gen       uint64      // counts arms and disarms: a timer of an earlier arm does nothing
	stop      func() bool // the armed timer's Stop (nil: none armed)
}

// New returns the suspend part of sess, whose lock is mu.
func New(mu *sync.Mutex, sess Session, cfg Config) *Suspender {
	if cfg.After == nil {
		cfg.After = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return &Suspender{mu: mu, sess: sess, cfg: cfg}
}

// NoteStateLocked arms the idle timer when the session turns idle and
// disarms it when it leaves idle (the session calls it on every change
// of its state).
func (u *Suspender) NoteStateLocked(idle bool) {
	if idle {
		u.armLocked()
	} else {
		u.DisarmLocked()
	}
}

func (u *Suspender) armLocked() {
	u.DisarmLocked()
	if u.cfg.Timeout <= 0 || u.sess.Status().Gone {
		return
	}
	g := u.gen
	u.wg.Add(1)
	u.stop = u.cfg.After(u.cfg.Timeout, func() {
		defer u.wg.Done()
		u.Fired(g)
	})
}

// DisarmLocked stops the armed timer; one already firing finds its
// generation past and does nothing.
func (u *Suspender) DisarmLocked() {
	u.gen++
	if u.stop != nil {
		if u.stop() {
			u.wg.Done()
		}
		u.stop = nil
	}
}

// GenLocked is the generation of the timer armed now (tests fire it with
// Fired).
func (u *Suspender) GenLocked() uint64 { return u.gen }

// Fired is the idle timer of generation g: it suspends the session if it
// is quiet; an idle session that is not (a permission asked outside a
// turn, a control request pending) waits another timeout.
func (u *Suspender) Fired(g uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if g != u.gen {
		return // disarmed or re-armed since
	}
	u.stop = nil
	if st := u.sess.Status(); !st.Quiet {
		if st.Idle {
			u.armLocked()
		}
		return
	}
	u.suspended, u.stopping, u.wanted = true, true, false
	u.sess.Suspend("idle for " + u.cfg.Timeout.String() + ": claude stopped; the next turn resumes it")
}

// StoppedLocked is called by the session's goroutine that stopped claude
// for a suspend, once claude has ended: a use that came meanwhile (a held
// turn, a mode or model chosen) resumes the session at once, a close
// meanwhile ends it (after: what the caller runs once it released the
// lock; nil when there is nothing).
func (u *Suspender) StoppedLocked() (after func()) {
	st := u.sess.Status()
	switch {
	case st.Gone: // closed meanwhile
		u.clearLocked()
		return u.sess.End()
	case u.wanted || st.Held:
		u.resuming = true
		u.sess.Resume() // it keeps stopping until the new claude runs
		return nil
	}
	u.stopping = false
	u.cfg.Log.Info("suspended an idle session: claude stopped; its next turn resumes it")
	return nil
}

// WakeLocked resumes a suspended session (a turn was held, or a mode or
// model chosen): at once when claude is stopped, else once it is.
func (u *Suspender) WakeLocked() {
	switch {
	case !u.suspended || u.sess.Status().Gone:
		return
	case u.stopping:
		u.wanted = true
		return
	}
	u.stopping, u.resuming = true, true
	u.cfg.Log.Info("resuming a suspended session")
	u.sess.Resume()
}

// ResumedLocked notes that the session's restart path has launched its
// new claude, and reports whether that was the resume of a suspended
// session (false: the session was restarting, not suspended).
func (u *Suspender) ResumedLocked() bool {
	was := u.suspended
	u.clearLocked()
	return was
}

// ClearLocked notes that the session is no longer suspended: its resume
// failed, and it has exited.
func (u *Suspender) ClearLocked() { u.clearLocked() }

func (u *Suspender) clearLocked() {
	u.suspended, u.stopping, u.wanted, u.resuming = false, false, false, false
}

// SuspendedLocked reports whether the session is suspended (its claude
// stopping, stopped, or its new one starting).
func (u *Suspender) SuspendedLocked() bool { return u.suspended }

// AtRestLocked reports whether the session is suspended and no new claude
// is being started for it: it does not count against MaxSessions, its
// claude stopping or stopped.
func (u *Suspender) AtRestLocked() bool { return u.suspended && !u.resuming }

// CloseLocked is the session's close (with its closing set): the timer is
// stopped, and a suspended session with nothing under way (no goroutine
// of its own to report it) has its exit reported now. Nothing is held
// then (a held turn resumes the session).
func (u *Suspender) CloseLocked() {
	u.DisarmLocked()
	if u.suspended && !u.stopping && !u.sess.Status().Exited {
		u.clearLocked()
		u.sess.End()
	}
}

// Wait waits for the timer's callbacks (after CloseLocked).
func (u *Suspender) Wait() { u.wg.Wait() }

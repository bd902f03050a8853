// Package idle is the suspend part of one proxy session: a session idle
// for its timeout (Options.IdleTimeout: no turn running or queued, no
// permission asked, no control request pending, no restart under way or
// wanted, no held turn) has its claude stopped and is "suspended"; its
// next session/send, setPermissionMode or setModel resumes it. A suspend
// is the first half of a restart whose second half waits for the next
// use: while suspended the session has no process it runs, so it is
// "restarting" to every other part (turns held, the mode and model kept
// for the new claude, interrupt answered at once, MCP changes left to the
// new process). The resume is the session's restart path: claude --resume
// of its Claude session, in its cwd, with its chosen model, its
// permission mode, the MCP configuration in force and its MCP toggles
// re-applied; the held turns are written once it has initialized. Seq
// numbers continue, and the log holds each event once (the resumed claude
// replays nothing of the conversation: docs/CLI-NOTES.md).
//
// It does not import package proxy: a proxy.Session makes its Suspender
// with New and is seen by it only through the Session interface (its
// Status, Suspend, Resume, End); the Suspender decides when, the session
// does the stopping and starting.
//
// # Data flow
//
//	the session turns idle ─► NoteState: the timer armed (Config.After, time.AfterFunc's by default)
//	  ─► timeout, no change since ─► fired: not Status.Quiet ─► armed again (if still idle)
//	                                       quiet ─► Session.Suspend: claude out of use, session/state
//	                                         suspended, a goroutine of the session stops claude ─► StoppedLocked:
//	                                         closed meanwhile ─► Session.End; a use meanwhile ─► Session.Resume
//	a use (held turn, mode, model) ─► WakeLocked ─► Session.Resume at once, or once claude has stopped
//	the new claude launched ─► ResumedLocked (the session's restart path)
//	close ─► CloseLocked: the timer stopped; a suspended session at rest ─► Session.End
//
// # Goroutines
//
// The idle timer's callback, counted in the Suspender's wait group from
// when it is armed until it runs or is stopped (Wait waits for it; the
// session's close calls it after CloseLocked disarmed the timer). The
// goroutine that stops claude and the resume are the session's own
// (Session.Suspend, Session.Resume start them in its wait group).
//
// # Locks
//
// None of its own: every field but the configuration is guarded by the
// session's lock (the *sync.Mutex given to New, proxy's Session.mu). The
// timer's callback takes it; every other method ending in Locked, and the
// Session's methods, are called with it held.
package idle

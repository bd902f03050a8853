// Package turnstate reads from claude's events which turn a session's
// claude process runs, so that the session's state (running or idle)
// follows what claude does rather than what was sent: claude also starts
// turns by itself, merges queued user turns, and feeds one into a running
// turn (turnstate.go has the rules; docs/CLI-NOTES.md what was measured).
// It does not import package proxy.
//
// # Data flow
//
//	session/send ─► Queue (the turn's Key) ─┐
//	claude's events ─► Event ────────────────┴─► Busy, StateName: the session settles its state
//	a turn not written ─► Unqueue; the process exited ─► EndAll; a new process ─► Reset
//
// # Goroutines and locks
//
// None: a Turns is not safe for concurrent use; its owner's lock guards it
// (proxy's Session.mu, held for every call).
package turnstate

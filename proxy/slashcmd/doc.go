// Package slashcmd keeps the slash commands claude offers in one session,
// for session/commands (SPEC §4). Claude says them in its answer to
// initialize (measured on 2.1.329 and 2.1.332: docs/CLI-NOTES.md "What
// initialize answers"), so they are known while the session is still
// starting, and again, as a whole new list, in each system/commands_changed
// event (SubtypeChanged).
//
// # Data flow
//
//	initialize answer, system/commands_changed ─► List.Note: parsed (Parse: bounded, invalid
//	  names left out) ─► when it changed: the session/commands push built once ─► push (the
//	  session's hub)
//	a subscription turning live for the first time ─► List.Frames: the last push, if any
//
// # Goroutines and locks
//
// None: a List is not safe for concurrent use; its owner (a proxy Session)
// guards it with its own lock (Session.mu), under which push is called.
// The package imports no proxy.
package slashcmd

// Package rewind serves session/rewind (SPEC §3): the conversation of a
// proxy session continues from just before a user message, and with files
// the files claude changed since then are restored first. What the CLI
// does, as measured (docs/CLI-NOTES.md): rewind_files {user_message_id,
// dry_run?} lists and restores the files changed since a user message when
// claude runs with CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1 (every
// claude a session starts has it: WithFileCheckpoints); --resume <id>
// --resume-session-at <uuid> resumes the conversation as it was at that
// record, whose uuid is the user message's parentUuid in the session file
// (history.Store.Message).
//
// A replay of a recording (serve --demo, --replay) has neither a session
// file nor file checkpoints: the proxy answers ReplayRefusal before Run.
//
// It does not import package proxy: Run sees the session through the
// Session interface (its conversation and process now, the message, the
// restart begun, undone or completed) and its claude process as a Proc.
//
// # Data flow
//
//	session/rewind ─► Run: Session.Current (refusals: exited, not idle, a turn running)
//	  ─► Session.FindMessage (a user message, a prompt) ─┬─ dry run: rewind_files dry_run ─► the reply
//	                                                     └─ Session.Begin (restarting: turns held)
//	  ─► with files: rewind_files dry_run, then rewind_files (a failure: Session.Undo)
//	  ─► Session.Restart: the rewound marker (Event) logged, claude restarted with --resume-session-at
//
// # Goroutines and locks
//
// None of its own: Run runs in the request's goroutine (the requests
// component's runner). The session takes its own lock inside its methods,
// never held while Run waits for claude or reads the session file.
package rewind

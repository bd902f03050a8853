// Package models is the model part of a proxy session: the models claude
// offers (its initialize reply's models: value, displayName, description;
// at most protocol.MaxModels, texts cut at their bounds, the cut logged)
// and the model the session runs: the value last chosen (session/create's
// model, session/setModel's set_model) while system/init reports what it
// resolves to, else the id system/init reports. Both go in session/state
// and the subscribe reply; a restarted process is launched with the
// chosen model (Args: its --model flag). It does not import package proxy: the proxy's
// Session.setModel sends set_model and records the answer with Choose.
// Measured on the real CLI 2.1.329: docs/CLI-NOTES.md ("set_model").
//
// # Data flow
//
//	claude's initialize reply ─► NoteList ─┐
//	system/init events ─► NoteInit ────────┼─► Current, Infos, Gen (a change: the session pushes session/state)
//	session/setModel's answer ─► Choose ───┘   Chosen: the model a new process is launched with
//
// # Goroutines and locks
//
// None: a State is not safe for concurrent use; its owner's lock guards
// it (proxy's Session.mu, held for every call).
package models

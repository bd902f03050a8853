// Package files serves session/files (SPEC §3): the files and folders
// under a session's working directory that match a query, for `@`
// mentions in a composer. It lists the directory itself rather than ask
// claude (the CLI's file_suggestions control request follows links out of
// the directory, lists hidden and ignored entries, and answers fuzzy
// queries only once its index is built; docs/CLI-NOTES.md).
//
// # What it lists
//
// List walks the directory breadth first (shallow entries before deep
// ones). It honours .gitignore files (the directory's and each folder's,
// git's syntax: negation, folder-only patterns, anchoring, *, ?, […],
// **), does not enter an ignored folder, skips hidden entries (a name
// starting with "."), and never leaves the directory: a symbolic link is
// listed only when it resolves inside the directory, and is never
// followed into. It stops after Options.MaxEntries entries or
// Options.Timeout (Truncated). Matches are ranked (a name starting with
// the query, then a path containing it, then a path holding its
// characters in order; shallower and shorter first) and cut to the
// request's limit.
//
// # Goroutines and locks
//
// None: List runs in the caller's goroutine (a goroutine of the request's
// connection) and returns when the walk ends, its context ends or its
// time is up. Lister holds a buffered channel of slots (Options.MaxWalks):
// a listing beyond it is refused with limit_exceeded, never queued.
// Lister is safe for concurrent use and has nothing to close.
package files

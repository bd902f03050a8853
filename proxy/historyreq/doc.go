// Package historyreq serves history/list and history/read (SPEC §3), and
// history/rename, history/delete, history/restore, history/trash and
// history/export (capability history.manage; manage.go), from
// package history's Store over <Home>/.claude/projects, for package
// Package historyreq serves history/list, history/read and history/search
// (SPEC §3) from package history's Store over <Home>/.claude/projects (and
// package history/search's index of it, opened on the first search in
// Options.IndexDir and closed by Close after the requests), for package
// proxy's feature table. It does not import proxy: the server hands it
// the blob store (a stream.Sink) and the scrub of the MCP configuration's
// secrets (Options.ScrubEvent), and runs its handlers under the Runner it
// returns.
//
// # Data flow
//
//	history/list ─► Store.List (the index by size, mtime, inode) ─► HistoryListResult
//	history/read ─► Store.Read (normalized like live events; attachments of past
//	   tool results ─► the Sink, served by /v1/blobs) ─► cut at the reply budget
//	   (ReplyBytes, at an event the store marks as a Break) ─► tool_result events
//	   scrubbed (ScrubEvent) ─► HistoryReadResult
//	history/rename ─► Options.Live(id): a live session ─► its claude's rename_session
//	                  else ─► Store.Rename (the custom-title record appended)
//	history/delete ─► Options.Live(id): live ─► conflict; else Trash.Delete (files moved)
//	history/restore, history/trash ─► Trash (Options.TrashDir; purged at New, at each use)
//	history/export ─► Store.Export (Markdown from Read's events, or the file's lines),
//	   masked by ScrubEvent, cut at ReplyBytes
//	history/search ─► search.Index.Search (update by size/mtime/inode, then FTS5;
//	   text masked with Scrub before indexing and in snippets) ─► HistorySearchResult
//
// # Goroutines
//
// The requests run through the Runner (package proxy/runner): each in a
// goroutine of its connection, at most MaxRequests at once over all
// connections (limit_exceeded beyond), cancelled when its connection ends
// or at Shutdown (shutting_down). Close shuts down, then waits for the
// requests' replies; the server calls Shutdown when it begins to shut down
// and Close before it closes the connections. The Store is safe for
// concurrent use and starts no goroutines.
//
// # Locks
//
// None of its own: Requests is immutable after New; the runner, the
// Store and the Trash lock themselves. Options.Live takes the server's
// locks (Server.mu, then a Session's): it is called with none held.
// searcher.mu guards the index handle (opened once, closed once); the
// index serializes its searches itself. Otherwise Requests is immutable
// after New; the runner and the Store lock themselves.
package historyreq

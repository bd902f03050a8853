// Package history lists and reads the sessions the Claude Code CLI keeps
// on disk, so that a webview can browse past conversations (including ones
// started in a terminal) and show them the way it shows live ones. It
// imports only package stream of ccproxy; wiring it to requests such as
// history/list and history/read is the proxy's job: List and Read return
// plain Go values (JSON-tagged) meant to go into such replies as they are.
//
// # Where the files are
//
// The CLI writes every session to
//
//	~/.claude/projects/<project dir, every non-alphanumeric byte → "-">/<session id>.jsonl
//	                  …/<session id>/subagents/agent-<agent id>.jsonl (+ .meta.json {"toolUseId"})
//	                  …/<session id>/tool-results/<name>.{txt,png,…}
//
// one JSON record a line: user and assistant messages (one record per
// content block of a reply), system records, and much bookkeeping
// (attachment, api-request*, queue-operation, last-prompt, cost-state,
// tools-used, …). docs/CLI-NOTES.md says what was found in real files of
// 2.1.329 and 2.1.330 (kept in testdata/history). A Store reads only under
// its root (default $HOME/.claude/projects): symlinks below the root, for
// folders and files alike, are never followed, files of other users are
// skipped, and ids are letters, digits, "-" and "_" only, so that no id
// names another path.
//
// # Data flow
//
//	List:  ReadDir(root) ─► ReadDir(folder) ─► Lstat each <id>.jsonl ─► index entry
//	       unchanged (inode, size, mtime) ─► as is
//	       grown, same first 4 KiB ─► read from the entry's offset to the end
//	       shrunk or replaced ─► read all again
//	       ─► sort newest first (Updated, then id) ─► page after the cursor
//
//	Message: find <id>.jsonl ─► read from the start to the record of a uuid ─► its type, parentUuid, whether a prompt (session/rewind)
//
//	Read:  find <id>.jsonl ─► seek to the cursor (a byte offset) ─► stream.Reader (capped lines)
//	       ─► record ─► live-shaped event {"type","message","parent_tool_use_id",
//	          "tool_use_result","uuid","session_id","timestamp"} ─► stream.Normalizer
//	          (tool_result text, attachments to a stream.Sink, "mcp" annotation)
//	       ─► after an assistant event with a tool use that started a subagent:
//	          the subagent's events, parent_tool_use_id = that tool use, agent_id,
//	          subagent_type, task_description (as on the live stream)
//	       ─► a page does not end between a tool use and its result (it may run
//	          past Limit by as much again to take them in)
//	       ─► stop after Limit events, or once the events take MaxBytes (at the next
//	          line with no tool use pending, at once past 2×MaxBytes; subagents'
//	          events count): Next = the offset after the last line read, and
//	          nothing after it is read or normalized; Event.Break marks the
//	          events of the file read a page could also end before (a caller
//	          with a stricter bound cuts there)
//
// A subagent is read (nested, or by ReadOptions.Agent) from
// subagents/agent-<id>.jsonl only when that is a regular file and neither
// the session folder nor subagents/ is a symlink; by Agent, a meta file
// naming it is not needed (one found through a tool result has none).
//
// Lines are read through a feeder that hands stream.Reader at most one line
// per Read, so the bytes handed out are the offset of the next line: that is
// what makes a cursor a byte offset, and the first page of a 50 MB file
// cost only what its events take. A line that is not a JSON object is
// skipped and counted (Corrupt); a line over Options.MaxLine is drained
// without being held and counted (Oversized); a last line without "\n" that
// is not yet valid JSON, or is over the cap, is left for later (the CLI may
// be writing it): not counted, and the cursor stays before it. Titles are capped (Options.MaxTitle).
//
// # Rename, trash, export
//
// Rename appends the CLI's own {"type":"custom-title","customTitle",
// "sessionId"} record (what its rename_session writes; the last one wins,
// for the CLI's `--resume <title>` and for List, TitleFrom "custom") with
// one O_APPEND write, opened without following a symlink, to the user's
// own regular file only. It is for sessions no claude runs: the proxy asks
// a live claude to rename itself.
//
// Trash (trash.go) moves a session's <id>.jsonl and <id>/ folder into
// <trash>/<Unix ms>-<id>/files/ beside a manifest.json (id, folder,
// project, title, deleted, the names moved and where they were), and
// Restore renames them back (RENAME_NOREPLACE on Linux: never over a file
// that is there again, ErrExists). Renames only: byte-identical, and the
// trash must be on the projects directory's file system. What was deleted
// more than TrashKeep (30 days) ago is removed at OpenTrash and at every
// Delete and List.
//
// Export (export.go) gives the file's lines (each through a scrub) or
// Markdown rendered from Read's events: text, tool calls (name, one input
// field, 200 characters), results (1000 characters), attachments as links
// to the Sink's URLs, subagents quoted under their tool call; thinking and
// the CLI's own records left out. Both are cut at a line at MaxBytes.
//
// # Goroutines and locks
//
// The package starts no goroutines; List and Read run on the caller's and
// may be called concurrently. Store.mu guards the index (the map from path
// to entry and every entry in it); List holds it while it scans, so two
// Lists never read the same file twice, and Read takes it only to look a
// session up (and to bring its entry up to date: the entry knows whether a
// rewind forked the file, rewound.go). Store.rewMu guards the rewound sets
// of forked files (taken after Store.mu is released, never under it).
// Store.bytesRead is atomic. A Normalizer lives for one Read.
// Trash.mu serializes a Trash's Delete, Restore, List and Purge; it is
// taken before Store.mu, never under it.
package history

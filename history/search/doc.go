// Package search is the full-text index behind history/search: it finds
// the Claude Code sessions under a projects directory whose conversation
// holds every word of a query, newest first, with a snippet around each
// match and where the words are in it.
//
// # What is indexed
//
// Of each <folder>/<id>.jsonl under the root (found with package
// history's rules: no symlink followed, other users' files skipped), every
// user and assistant record that history/read shows (not isMeta): the text
// the user typed, the text of replies, and each tool use's name and input
// values (Extract). Not tool results, thinking, subagents or bookkeeping
// records. Each such part is one document (its record's uuid, timestamp,
// role), its text capped at 64 KiB. Text passes Options.Scrub (the MCP
// configuration's secrets) before it enters the index, and a snippet
// passes it again with the set in force, a match that only a now-secret
// word made being dropped: a masked secret is neither found nor shown.
//
// # Files
//
// One SQLite database per projects directory, Options.Dir/history-<first
// 8 bytes of sha256(root), hex>.db (with SQLite's -wal and -shm), 0600 in a
// 0700 directory made by internal/privdir (a symlink is refused, never
// followed). Tables: files (path, inode, size, mtime, the offset indexed
// to, a checksum of the first 4 KiB, and what a hit shows: session id,
// first cwd, first prompt, last summary, last timestamp), docs (file,
// timestamp, role, uuid) and fts, an FTS5 table (unicode61 tokenizer,
// diacritics removed) whose rowid is the doc's. The index can always be
// rebuilt from the session files: one that cannot be opened, fails
// PRAGMA quick_check, is of another schema version, or reports
// SQLITE_CORRUPT/NOTADB while in use is removed and made anew, with a log
// line, never a crash.
//
// # Keeping it current
//
// Every Search first updates the index (Update): a walk of the root's
// folders, one Lstat per session file, compared with its files row by
// inode, size and mtime. Unchanged: not opened. Grown, same inode and
// first 4 KiB: read from the offset indexed to. Shrunk or replaced: its
// documents dropped and read again. Gone: its documents dropped. A last
// line without "\n" is left for the next update (the CLI may be writing
// it); a line over Options.MaxLine (16 MiB: images, request blobs) is
// skipped unread. Documents are inserted in transactions of at most
// Options.BatchBytes of text (4 MiB), each also saving the offset reached,
// so memory stays bounded however large a history is and an interrupted
// update resumes where the last commit stopped.
//
// # Why SQLite FTS5 (modernc.org/sqlite) and not bleve
//
// Both are pure Go: CGO_ENABLED=0 builds for linux, windows and darwin
// (amd64; darwin/arm64 for SQLite too) passed for both. A throwaway spike
// indexed the same documents (Extract of every record: 13,708 on the
// synthetic home of 500 sessions / 216 MB, internal/synth) with each, one
// run each, on the 2-core development machine while 7 other builds ran
// (load average 24–35, so absolute times are inflated; the ratios hold):
//
//	                             SQLite FTS5 (modernc 1.62.0)  bleve v2.6.3
//	index build                  4.8 s and 7.3 s (2 runs)      18.2 s
//	peak RSS while building      30 MiB                        96 MiB
//	RSS with the index open      19–30 MiB                     79 MiB
//	index on disk                10.7 MB (spike schema)        14.7 MB
//	warm query, selective word   0.3–0.5 ms                    0.3 ms
//	warm query, common words     85–160 ms (60 snippets)       7–19 ms (60 hits)
//	binary growth (empty main)   +7.4 MB                       +19.1 MB
//	modules / non-std packages   +8 / 14                       +26 / 123
//
// bleve answers common words faster, but its build time and memory miss
// the targets (first search < 5 s, index RSS < 64 MiB) and it brings
// three times the dependencies and binary; FTS5 meets them, keeps the
// index in one file that is easy to check and rebuild, and its warm
// queries stay well under 300 ms. internal/searchbench measures this
// package (the medians are in the branch's report).
//
// # Goroutines and locks
//
// The package starts no goroutines of its own (database/sql keeps one per
// open database, stopped by Close). Index.mu serializes everything: an
// update and the query that follows it run under it, so two searches never
// index the same file twice and a search never sees half an update; it
// guards db, files, byID and stats. The database has one connection
// (SetMaxOpenConns(1)) with an 8 MB page cache. Close is idempotent and
// waits for a running search (it takes mu).
package search

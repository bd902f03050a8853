// Package eventlog is a session's replay log: the frames of its events in
// seq order, the newest in memory, the older spilled to files on disk and
// read back in chunks; the memory budget shared by every session's log;
// and the spool, the private directory the spill files go to. It knows
// nothing of sessions, clients or the protocol: a frame is bytes, a seq a
// number (package proxy owns the hub that fans frames out to clients).
//
// # Data flow
//
//	Append(seq, frame) ─► memory ring (≤ memMax bytes; Log.TrimMem, Budget.Trim)
//	                         │ oldest frames
//	                         ▼
//	                      spill: the newest segment's write buffer ─► segment file name.N.log in Spool.Dir()
//	                         │ over diskMax: the oldest segment is dropped (its events are lost)
//	                         │ a failed spill: every frame on disk is given up (TakeDiskErr, TakeDiskFails)
//	                         ▼
//	Collect(seq, maxFrames, maxBytes) ─► Chunk (frames in memory, pinned places on disk)
//	   ─► Chunk.Read (disk reads, no lock) ─► Chunk.Release (unpins)
//
// A Log's memory bytes are added to a counter (New's global, a Budget's
// Used) so that the Budget can tell when all logs together hold more than
// it allows (Over); Trim then spills the members' logs to disk, exited
// sessions' first, then the oldest frames of any log. The members are the
// owners of the logs (in proxy, each session's hub), behind the small
// Member interface: EvictionInfo, Spill, LogBytes.
//
// The Spool is a privdir.Run under its root, made on first use; making it
// removes the directories of ccproxy processes that died, Close removes
// the process's own.
//
// # Goroutines
//
// None. Append and TrimMem run on the caller's goroutine (in proxy, the
// session's stdout loop and Budget.Trim); Collect, Read and Release on the
// reader's (a client's write pump).
//
// # Locks
//
// A Log is not safe for concurrent use: its owner's lock guards it (in
// proxy, hub.mu) and every method of Log and Chunk.Release is called with
// that lock held — Chunk.Read alone runs without it (the regions it reads
// were written before Collect and never change; the segments they are in
// stay open until Release, even when dropped meanwhile).
//
// Budget.mu guards its members and serializes Trim and Bytes; Add, Remove,
// Trim and Bytes take it and are called with no member's lock and no
// session lock held (Trim and Bytes take each member's lock under it, so
// the order is Budget.mu, then hub.mu). Over and Used are atomic and may
// be called under any lock. Member methods take the member's own lock.
//
// A Spool is safe for concurrent use (Dir makes the directory once).
package eventlog

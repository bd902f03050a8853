// Package eventlog is a session's replay log and who reads it: the frames
// of its events in seq order, the newest in memory, the older spilled to
// files on disk and read back in chunks (Log); the hub that gives events
// their seq and fans them out to its subscriptions, live or catching up
// from the log, with the pushes kept in their place among the events (Hub,
// its readers behind the Subscriber interface); the memory budget shared
// by every session's log; and the spool, the private directory the spill
// files go to. It knows nothing of sessions, clients or the protocol: a
// frame is bytes, a seq a number, a reader a Subscriber (in proxy, a
// subscription of a websocket client, which queues frames on its
// connection and pulls while it catches up).
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
// A Hub (one per session) holds a Log and its subscriptions:
//
//	Append(build) ─► seq = LastSeq+1, frame = build(seq) ─► Log.Append
//	   ─► each live subscription: Subscriber.Event ─► Delivered, or Behind: it catches up
//	Push / PushState ─► live: Subscriber.Push; behind after being live: kept pending (≤ 1 MiB, else Lagged)
//	Subscribe ─► Subscriber.Send(reply), a gap frame if the log lost events, CatchUp
//	Pull (the reader, while catching up) ─► a gap frame, chunks of the log, the pending pushes in place
//	GoLive (at the end of the log, under the owner's lock) ─► the rest pending, extra ─► live
//
// A reader that keeps reading never loses an event unless the log itself
// lost it (its disk bound, a failed spill): then it gets a gap frame
// (HubConfig.Gap) and the rest. Hub's doc has the details.
//
// A Log's memory bytes are added to a counter (New's global, a Budget's
// Used) so that the Budget can tell when all logs together hold more than
// it allows (Over); Trim then spills the members' logs to disk, exited
// sessions' first, then the oldest frames of any log. The members are the
// owners of the logs (each session's Hub), behind the small Member
// interface: EvictionInfo, Spill, LogBytes.
//
// The Spool is a privdir.Run under its root, made on first use; making it
// removes the directories of ccproxy processes that died, Close removes
// the process's own.
//
// # Goroutines
//
// None. Append and TrimMem run on the caller's goroutine (in proxy, the
// session's stdout loop and Budget.Trim); Collect, Read and Release on the
// reader's (a client's write pump). A Hub's Append, Push and PushState run
// on the session's goroutines, Pull and GoLive on the reader's; the hub
// calls its Subscribers on those goroutines, with its lock held.
//
// # Locks
//
// A Log is not safe for concurrent use: its owner's lock guards it (its
// Hub's mu) and every method of Log and Chunk.Release is called with
// that lock held — Chunk.Read alone runs without it (the regions it reads
// were written before Collect and never change; the segments they are in
// stay open until Release, even when dropped meanwhile).
//
// Budget.mu guards its members and serializes Trim and Bytes; Add, Remove,
// Trim and Bytes take it and are called with no member's lock and no
// session lock held (Trim and Bytes take each member's lock under it, so
// the order is Budget.mu, then Hub.mu). Over and Used are atomic and may
// be called under any lock. Member methods take the member's own lock.
//
// Hub.mu guards the Log, the subscriptions and every Subscription's
// fields but gone (atomic: a reader checks it without the lock). It is
// taken after the owner's lock (in proxy, Session.mu: GoLive is called
// with it held, so turning live is atomic with everything the session
// pushes) and before the Subscriber's own locks (in proxy, client.mu and
// the connection's wsconn.Conn.mu): every Subscriber method is called with
// Hub.mu held and must not wait. GoLive's extra runs with Hub.mu held and
// may use Subscription's WasLive, StateKey and SetStateKey. Release takes
// Budget.mu after Hub.mu is released; no session lock may be held.
//
// A Spool is safe for concurrent use (Dir makes the directory once).
package eventlog

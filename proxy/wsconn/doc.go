// Package wsconn is one websocket connection, with nothing of what its
// frames mean: the read pump (frame and inbound-budget limits), the write
// pump (a send queue bounded in frames and bytes, batched writes, pings,
// deadlines, the close handshake) and the mechanics under them — the
// batching conn (BatchConn, handed to the websocket library by Hijacker
// at the upgrade), the read of one inbound frame within a size limit and a
// shared memory budget (ReadFrame, Budget). It knows nothing of sessions
// or requests: a Conn hands the text frames it reads to a Handler (in
// proxy, the client, which parses and dispatches them) and writes the
// frames it is given.
//
// # Data flow
//
//	peer ─► read pump: ReadFrame (≤ MaxFrameBytes, memory from the Budget) ─► Handler.HandleFrame
//	        (too large, refused, binary ─► Handler.Refuse)
//	Enqueue / EnqueueEvent ─► send queue (≤ QueueFrames, QueueBytes; twice that for non-events)
//	   ─► write pump: take a batch ─► BatchConn.Begin, WriteMessage…, Flush ─► peer
//	an event that does not fit ─► its Source on the catch-up list ─► the write pump pulls
//	   (Source.Pull) once the queue is empty, until the Source says it caught up (StopCatchUp)
//
// A frame belongs to a Source (a subscription, in proxy) or to none; a
// frame whose Source is Gone when its turn comes is not written. A peer
// that keeps reading never loses an event: what does not fit is pulled
// later. A non-event frame that would take the queue over twice its bound
// drops the connection (1008, "slow consumer: send queue full …"), as does
// a write that makes no progress for WriteWait or nothing read for PongWait
// (no close frame then); each drop is counted (Config.Dropped) and logged
// once as a WARN with its reason.
//
// ReadFrame grows the frame's buffer only as far as the Budget (all
// connections) and the frame limit allow, and reads a frame that does
// not fit to its end, keeping only its id (protocol.PeekID of its first
// FrameHeadBytes). The write pump brackets each batch of frames with
// BatchConn.Begin and BatchConn.Flush: the library's writes between them
// are gathered, at most BatchBytes, into one write(2) or writev(2).
//
// # Goroutines
//
// Run runs the read pump on the calling goroutine (in proxy, the HTTP
// handler's) and starts the write pump, the only writer of the connection,
// which it joins before it returns. The write pump ends on Kill (it drops
// the queue and sends the close frame given), on CloseGracefully or Close
// (it writes what is queued, then 1001 with Config.GoingAway), when the
// read pump has ended, or on a failed write; it closes the connection when
// it returns, which ends the read pump. The read pump ends when a read
// fails (the peer went away, PongWait passed, the connection was closed)
// or after the frame during which the connection was killed;
// Handler.Closed is then called, before the write pump is joined. Close
// (idempotent, any goroutine) asks for the graceful close and waits for
// both pumps, or for its context (then it closes the network connection).
// Handler methods run on the read pump; Source.Pull on the write pump.
//
// # Locks
//
// Conn.mu guards the send queue, the catch-up list, the kill state and the
// counts of frames out; it is a leaf: Enqueue, EnqueueEvent, CatchUp,
// StopCatchUp and Kill may be called with any lock of the caller held (in
// proxy, a session's and a hub's). Source.Pull, Source.Gone and the
// Handler are called with no Conn lock held. Kill logs
// after releasing mu. BatchConn.mu orders the library's writes (the write
// pump's frames, a pong or close frame from the read pump) with the write
// pump's Flush. Budget is safe for concurrent use (its mu), shared by the
// read pumps of all connections. Each of BatchConn.mu and Budget.mu is a
// leaf.
package wsconn

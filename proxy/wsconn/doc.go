// Package wsconn holds the mechanics of one websocket connection that do
// not depend on what the frames mean: the batching of writes (BatchConn,
// handed to the websocket library by Hijacker at the upgrade), the read of
// one inbound frame within a size limit and a shared memory budget
// (ReadFrame, Budget). It knows nothing of sessions; the proxy's client
// (proxy/client.go) runs the read pump and the write pump on top of it.
//
// Data flow: the read pump calls ReadFrame for each frame the library
// hands it; ReadFrame grows the frame's buffer only as far as the Budget
// (all connections) and the frame limit allow, and reads a frame that does
// not fit to its end, keeping only its id (protocol.PeekID of its first
// FrameHeadBytes). The write pump brackets each batch of frames with
// BatchConn.Begin and BatchConn.Flush: the library's writes between them
// are gathered, at most BatchBytes, into one write(2) or writev(2).
//
// Goroutines: none of its own. ReadFrame runs in the read pump. A
// BatchConn is written by the library (serialized by it: the write pump's
// frames, a pong or close frame from the read pump) and flushed by the
// write pump; BatchConn.mu orders the two. Budget is safe for concurrent
// use (its mu), shared by the read pumps of all connections. Locks: each
// of BatchConn.mu and Budget.mu is a leaf: nothing else is taken under it.
package wsconn

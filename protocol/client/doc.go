// Package client is a Go client of the protocol (protocol/SPEC.md): one
// websocket connection to a ccproxy (`ccproxy serve`, or a proxy.Server in
// the same process), on which a program sends requests and receives their
// replies and the pushes of the sessions it subscribed to. `ccproxy acp`
// speaks to the proxy through it, and Go tests use it as their client.
//
// # Use
//
//	c, err := client.Dial(ctx, "http://127.0.0.1:PORT", token) // or DialTLS for https
//	defer c.Close()
//	hello, err := c.Hello(ctx)                  // capabilities, limits
//	c.Handle(sessionID, func(f protocol.Frame) { ... }) // pushes of that session
//	err = c.Request(ctx, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: sessionID}, &result)
//	data, err := c.Blob(ctx, "/v1/blobs/<sha256>")  // an attachment
//	call, err := c.Begin(ctx, protocol.TypeSessionSend, &send) // written: a later request comes after it
//	err = call.Wait(ctx, nil)                                  // its reply
//
// An error reply is returned as a *protocol.Error (its Code and Message
// the proxy's); a request on a connection that ended returns ErrClosed.
//
// # Goroutines
//
// A Client owns one goroutine, its read loop (started by Dial, ended by
// Close or by the connection's end, after which Done is closed). It is
// the only reader of the websocket. It takes the first hello (Hello), hands
// each reply to the Request (or Call) waiting for it (a buffered channel per
// request: never blocks), and calls the handler of the session a push
// names (its data's "session"), synchronously and in order: a slow
// handler slows the read, and the proxy lets the client catch up from its
// replay log (SPEC §5.4), so nothing is buffered here without bound.
// Pushes of a session without a handler, and frames that do not parse,
// are dropped. When the loop ends, every waiting request returns
// ErrClosed.
//
// # Locks
//
// Client.writeMu serializes writes to the websocket (each with a write
// deadline of its own, not the request's ctx: a write cut short would end
// the connection). Client.mu guards the request ids, the pending replies,
// the push routes, the hello and the read loop's end error; it is never
// held while writing, while calling a handler, or while waiting. The two
// are never held together.
//
// # Concurrency contract
//
// Every method may be called from any goroutine at once. Request blocks
// until its reply, its ctx's end or the connection's end; a ctx already
// done sends nothing. Begin returns once the request is written, and its
// Call's Wait (called once) blocks as Request does. Handle and Blob may be called from a push handler;
// Request from a handler would wait for a reply the blocked read loop
// cannot deliver, so a handler that needs one starts a goroutine. Close
// is idempotent and waits for the read loop (so not from a handler).
package client

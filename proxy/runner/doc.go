// Package runner runs the slow requests of one feature of the proxy
// (history/list and history/read; mcp/probe, mcp/tools, mcp/call, mcp/log
// and mcp/test) in goroutines of their connections, at most a limit at
// once over all connections, and replies with what each returns. It knows
// a connection only through the small Conn interface (package proxy's
// client implements it), so the packages that serve those requests
// (proxy/mcpcalls, proxy/historyreq) do not import proxy.
//
// # Data flow
//
//	Run(conn, id, typ, do) ─► refused at once: shutting_down after Shutdown,
//	   limit_exceeded beyond the limit ─► conn.ReplyErr
//	   else ─► conn.Go: do(ctx) ─► conn.Reply(data), or conn.ReplyErr(shutting_down
//	   when the runner was shut down meanwhile; toError's error otherwise);
//	   nothing when the connection is gone
//
// # Goroutines
//
// Each request runs in a goroutine owned by its connection (Conn.Go, which
// the connection joins when it ends), counted in the runner's WaitGroup,
// with a context that ends with the connection or with the runner
// (Shutdown). Close (Shutdown, then the wait) returns once every request
// started before Shutdown has queued its reply (or found its connection
// gone): package proxy's Serve shuts the runners down when it begins to
// shut down and closes them before it closes the connections, so that
// every request cancelled by the shutdown has queued its reply
// (shutting_down) by then. Nobody else adds to the WaitGroup.
//
// # Locks
//
// Runner.mu orders the cancellation of the runner's context and each
// WaitGroup Add before Close's wait: a request that comes after Shutdown is
// refused with shutting_down and never started. It is taken alone, never
// while calling the Conn or do.
package runner

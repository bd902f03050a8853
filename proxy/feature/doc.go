// Package feature is the machinery of the proxy's feature table: what the
// proxy offers. Each feature registers once its capability (the name hello
// announces), whether the server offers it (under its Options and what is
// wired), and the request types it serves with their handlers. hello's
// capabilities (Table.Capabilities), the check that a request's type is
// offered (Table.Lookup) and dispatch (Type.Serve) all read it, so adding
// a request type is one entry in the table (proxy/features.go builds it).
//
// A handler gets the request's data decoded and validated into its
// protocol type (protocol.DecodeRequest). Its form says how it replies:
//
//   - Now: it returns the reply (or an error with a code) at once;
//   - Async: all of it runs in a goroutine of the connection (Conn.Go),
//     and what it returns is the reply;
//   - Later: its quick part runs now, in request order (looking the
//     session up, say), and returns either an error answered at once or
//     the slow part, which runs in a goroutine of the connection;
//   - Run: it runs under a feature's runner.Runner (a limit on the
//     requests running at once, shut down with the server);
//   - Replies: it replies through the connection itself (a subscription's
//     reply goes out atomically with the start of its replay; session/send
//     replies when claude has read the turn; mcp/login, which replies with
//     the URL and pushes how the login ends).
//
// The connection a request came on is a C, the proxy's connection type,
// which is a runner.Conn (its context, its goroutines, its replies).
//
// # Data flow
//
//	a decoded request ─► Table.Lookup(type): its Type, and whether it is offered ─► Type.Serve(c, id, data)
//	  ─► the handler's form: its reply or error ─► Conn.Reply / Conn.ReplyErr (exactly once)
//
// # Goroutines and locks
//
// None of its own: Async and Later run in the connection's goroutines
// (Conn.Go, owned and joined by the connection), Run under the runner's.
// A Table is built once and never changed; what it offers is decided at
// each call (Feature.Offered, Type.Offered). No locks.
package feature

// Package claudecli is a Go client of the Claude Code CLI's stream-json
// control protocol: it owns one `claude -p --input-format stream-json
// --output-format stream-json ...` process and knows nothing of what the
// host does with it (ccproxy's sessions, websockets and protocol frames
// live in package proxy).
//
// # Data flow
//
//	Send / SendAsync / Answer ─► bounded stdin queue ─► writeLoop (the one writer) ─► claude stdin
//	Call / CallAsync ─► pending[request_id] (timer: ControlTimeout) ─┘
//
//	claude stdout ─► stream.Reader (lines ≤ MaxLineBytes) ─► stream.Normalizer (Config.Stream) ─┬─ control_response: the pending request's waiter
//	                                                                                        ├─ control_request: OnControlRequest (answer with Answer)
//	                                                                                        ├─ control_cancel_request: OnControlCancel
//	                                                                                        └─ every other event, in order: OnEvent
//	claude stderr ─► tail (StderrTailBytes) + first lines to the Logger
//	exit ─► group killed ─► output read to the end ─► pending requests fail (ErrExited) ─► Exit, Done closed
//
// Claude runs in a process group of its own (internal/childproc), so the
// MCP servers it starts are signalled with it; whenever claude ends, what is
// left of its group is killed. Close is stdin EOF, CloseGrace, SIGTERM to the
// group, TermGrace, SIGKILL; it is idempotent and waits.
//
// A control request (host → CLI) gets the next request id; claude's answer
// is matched to it inside the client. A request not answered within
// ControlTimeout is forgotten and its waiter gets ErrTimeout (a late answer
// is dropped); requests pending when the process exits get ErrExited at
// once. Config.OnControlDone, when set, is told each request's subtype,
// latency and outcome, and Config.OnNormalized the time each stdout line
// took to normalize (ccproxy's metrics).
//
// # Goroutines and locks
//
// Start starts four goroutines, all joined by Wait (and Close): writeLoop,
// the only writer of stdin; readStdout, the only caller of the handlers
// and of the callbacks of answered requests; readStderr; and waitLoop,
// which reaps the process and closes Done. A control request's timeout is
// a time.AfterFunc, also joined. Client.mu guards the pending requests,
// the request counter and the exited flag; no callback or handler is
// called with it held.
//
// FindClaude locates the CLI and checks its version (MinClaudeVersion).
package claudecli

// Package proxy runs live Claude Code sessions for webviews: one long-lived
// claude process per session, its events numbered, logged and fanned out
// over a websocket, permission prompts brokered, MCP configuration applied
// live, and an MCP status feed. The wire protocol is webview-protocol/SPEC.md
// (package protocol).
//
// # Data flow
//
//	claude stdout ─► stream.Reader ─► stream.Normalizer ─┬─ control_* lines: the proxy's own (control protocol, permission broker)
//	  (1 MiB pipe)     lines ≤ cap     (attachments → blob  └─ events: seq, session/event frame built once,
//	                                   store, /v1/blobs)        replay log (bounded by bytes),
//	                                                            queued for every live subscriber
//	                                                                 │
//	client ◄─ websocket ◄─ write pump (the only writer) ◄── bounded send queue (full: close 1008)
//	                                  ◄── pulls from the replay log while a subscription catches up
//
//	client ─► read pump ─► validate (protocol) ─► request handlers ─► stream builders ─► stdin writer ─► claude stdin
//
//	mcpconfig.Watcher ─► MCPSource ─► flags at spawn (--mcp-config, --allowedTools)
//	                                 mcp_set_servers + mcp_status to live sessions when the active servers changed (mcpconfig.Diff; refused: restart with --resume)
//	                                 mcp/config (when anything changed), mcp/status (with what sessions report and probes find) ─► MCP subscribers, GET /v1/mcp/status
//	                                 MCPConfig.Resolved ─► probe.Prober ─► mcp/probe, mcp/tools, mcp/call, auto-probes
//
//	session stdout loop ─► calllog.Pairer (assistant tool_use + user tool_result) ─┬─► calllog.Log (JSON lines per project) ─► mcp/log
//	mcp/call result ─► calllog.DirectEntry ────────────────────────────────────────┘
//
// # Sessions
//
// A Session starts `claude -p --input-format stream-json --output-format
// stream-json --verbose --include-partial-messages --replay-user-messages
// --permission-prompt-tool stdio` (plus --model, --permission-mode,
// --resume, and the MCP flags last) in its own process group, with the
// user's text only ever on stdin. It sends initialize, then writes turns
// and control requests through one writer goroutine; a control request
// claude leaves unanswered for ControlTimeout is forgotten (its waiter gets
// a timeout). Claude's control requests are answered at once (can_use_tool
// goes to the broker; anything else gets an error).
//
// The broker (session.go, broker.go) makes each can_use_tool a
// permission/request of a kind: a tool use, AskUserQuestion's questions, or
// ExitPlanMode's plan; questions and plans never time out. A tool the
// current permission rules allow (MCPConfig.AllowedTools minus
// DisallowedTools: the settings' permissions.allow/deny, plus every active
// server with serve --allow-mcp-tools) is allowed without asking. An answer
// becomes claude's reply: answers are added to the question's input as
// "answers"; "always" first has the MCP source write the suggested rules to
// the session's .claude/settings.local.json (MCPConfigSource.AllowRules,
// outside Session.mu), then adds them as updatedPermissions with
// destination "session", so claude applies them at once (without such a
// source, destination "localSettings": claude writes them itself). The permission mode (Session.mode, under Session.mu) is
// what claude last reported in system/init or system/status, or what
// session/setPermissionMode (set_permission_mode) set; a restarted process
// starts in it, and session/state and session/list carry it. While a session
// restarts (an MCP change claude refused), up to 256 turns (the stdin
// queue's size) are held for the new process; more get limit_exceeded. Close is stdin EOF, CloseGrace, SIGTERM to the group,
// TermGrace, SIGKILL; whenever claude ends, what is left of its group (MCP
// servers) is killed, and subscribers get session/exited with the stderr
// tail. Claude is located with FindClaude (--claude, $CCPROXY_CLAUDE, PATH)
// and must be MinClaudeVersion or newer.
//
// # Replay and slow clients
//
// Every event gets the next seq and goes into the session's replay log.
// session/subscribe queues the reply (and a session/gap when the log no
// longer reaches back), then the client's write pump pulls logged frames
// itself, in chunks, until it reaches the end of the log; at that moment,
// under the session's lock, the subscription turns live and the pending
// permission requests follow. So a replay of any length never fills a send
// queue, and nothing is lost or sent twice. A live client whose queue is
// full is closed with 1008; reading claude's stdout never waits for a
// client. A client that reconnects resumes with afterSeq.
//
// # Probes, direct calls and the call log
//
// When the MCPSource's configurations carry the resolved configuration
// (MCPConfigSource's do), the proxy offers mcp/probe, mcp/tools and
// mcp/call through a probe.Prober (Options.MCPProbe): stdio servers get
// claude's environment without the token, and binary parts of call
// results go to the blob store like session attachments. These requests
// block for up to the probe or call timeout, so each runs in a goroutine
// of its connection, at most Options.MaxMCPRequests at once
// (limit_exceeded beyond), with a context cancelled when the connection
// ends or the proxy shuts down. Probe results are MCP status observations
// (origin probe, observed at ProbedAt) merged with the sessions' reports
// by SPEC §8: configuration first, then the newest definitive
// observation, a session report winning a tie; results of a definition
// that changed while probing are discarded. With Options.AutoProbe the
// proxy probes the active servers itself at start, and after a
// configuration change those with no definitive observation (new or
// changed definitions, servers just approved), from one loop owned by
// Serve. With Options.CallLogDir, every session's stdout loop has a
// calllog.Pairer that looks only at the assistant and user events package
// stream marked as holding MCP blocks (Event.MCP; every other event is
// passed over unparsed), and appends each MCP call it completes to the
// project's call log (calls it had to forget are logged as a warning); every
// mcp/call that got a result is appended too; mcp/log reads it back.
// Inputs and outputs are kept only with Options.CallLogIO.
//
// # Concurrency
//
// Goroutines and their owners: Server.Serve owns the HTTP server, the MCP
// loop, the auto-probe loop and every connection handler (joined before
// Serve returns; on shutdown MCP requests are cancelled and their replies
// queued before connections close); a connection handler runs the read
// pump and owns the write pump and the goroutines of slow requests (MCP
// probes and calls among them); a Session owns, per process, the stdin
// writer, the stdout and stderr loops and the waiter, plus permission
// timers and a restart (joined by close). Lock order: Server.mu, then
// Session.mu or mcpHub.mu, then client.mu; queueing a frame never blocks.
// MCPConfigSource owns the goroutine forwarding its Watcher's events.
//
// Logs use log/slog with constant keys; the token, environment values of
// MCP servers and header values never appear in a log line or a frame.
package proxy

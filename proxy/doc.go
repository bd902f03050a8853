// Package proxy runs live Claude Code sessions for webviews: one long-lived
// claude process per session, its events numbered, logged and fanned out
// over a websocket, permission prompts brokered, MCP configuration applied
// live, and an MCP status feed. The wire protocol is protocol/SPEC.md
// (package protocol). Its parts live in packages of their own, each with a
// doc.go giving its flow, goroutines and locks, none importing proxy:
// claudecli (one claude process), eventlog (the replay log and its
// readers), wsconn (one websocket), remote (who may reach the proxy),
// feature (the feature table's machinery), toolfiles (/v1/blobs,
// /v1/tool-results), metrics (GET /metrics), mcphub (MCP configuration,
// status, management, sign-in), mcpcalls (MCP probes, calls, the call
// log), historyreq (the history requests), runner (the slow requests of a
// feature), files (session/files), spare (warm spares), and the parts of a
// Session: broker (its permission requests), turnstate, models, slashcmd
// (its slash commands), held (its held turns), idle (suspend while idle),
// mcpsession (its MCP part), rewind (session/rewind) and usage. This
// package is the Server, its sessions and connections (the Session's
// parts wired to each other behind small interfaces), and the feature
// table.
//
// # Data flow
//
//	claude stdout ─► claudecli.Client ─► stream.Normalizer ─┬─ control_* lines: the client (answers to its requests; claude's own → the session's broker)
//	                 (attachments → blob store, /v1/blobs)   └─ events: Session (scrubbed, turn state) ─► hub (eventlog.Hub): seq, session/event
//	                                                            frame built once, replay log (memory, spill files), every live subscriber
//	client ◄─ wsconn.Conn's write pump (the only writer) ◄── send queue, bounded in bytes and frames
//	                                                     ◄── pulls from the replay log while a subscription catches up
//
//	client ─► wsconn.Conn's read pump ─► client.HandleFrame ─► validate (protocol) ─► feature table (features.go) ─► handler
//	  ─► Session ─► stream builders ─► claudecli stdin writer ─► claude; its reply (or an error with a code) ─► send queue
//
// The feature table (features.go; its machinery is package proxy/feature,
// generic over the connection, here *client) lists each capability once
// with the request types it serves and their handlers; hello's capabilities, the check that a type
// is offered (unknown_type otherwise) and dispatch all read it. A handler
// takes the decoded request and returns its reply; one whose slow part
// runs in the background returns that part (later), runs in a goroutine
// of the connection (async) or under a feature's runner (run,
// proxy/runner). The handlers of subscriptions, session/send,
// session/interrupt and the MCP management, auth and live requests still
// queue their replies through the connection themselves (replies). The
// MCP features' handlers are adapters (mcpfeatures.go) over proxy/mcphub;
// calls.go adapts proxy/mcpcalls and proxy/historyreq.
//
// # Sessions
//
// A Session (session.go: its parts, goroutines and locks) is one claude
// process at a time, run by a claudecli.Client with the user's text only
// ever on stdin: `claude -p --input-format stream-json --output-format
// stream-json --verbose --include-partial-messages --replay-user-messages
// --permission-prompt-tool stdio` plus --model, --permission-mode,
// --resume and the MCP flags last (claudeArgs, process.go). It is
// composed of parts with one job each: the process (process.go: spawn,
// exit watcher, exit report, close: stdin EOF, CloseGrace, SIGTERM to the
// group, TermGrace, SIGKILL), turns (package proxy/turnstate: the state
// follows claude's events, not what was sent), the permission broker
// (package proxy/broker; the session is its brokerSession), models
// (package proxy/models; model.go has session/setModel and the permission
// mode's switch), the slash commands (package proxy/slashcmd), restarts
// and held turns (restart.go; the queue is package proxy/held: up to 256
// turns and 64 MiB held while a restart runs, written once the new process
// answered initialize), suspend while idle (package proxy/idle behind
// suspend.go's idleSession: after IdleTimeout with nothing under way
// claude is stopped, state suspended; the next send, setModel or
// setPermissionMode resumes it through the restart path), MCP in the
// session (package proxy/mcpsession behind sessionmcp.go's mcpSessionOf),
// and usage (proxy/usage, usage.go: tokens and cost from result events,
// the context window from get_context_usage); session/rewind (package
// proxy/rewind behind rewind.go's rewindSession) restores files with
// rewind_files and restarts through the restarts part
// with --resume-session-at. What a session reaches of the Server is its sessionEnv
// (session_env.go), built by Server.newSession. Claude's control requests
// are answered at once: can_use_tool goes to the broker, anything else
// gets an error. Claude is located with FindClaude and must be
// MinClaudeVersion or newer; with Options.Replay the "CLI" is ccproxy's
// replay of a recorded session (ReplayName in hello, /v1/health and the
// log).
//
// Each session's hub (hub.go) is an eventlog.Hub with the session/gap
// frame and the subscriptions of clients added; a subscription is the
// hub's eventlog.Subscriber and its connection's wsconn.Source, and turns
// live under Session.mu (Session.pull), followed by the pending permission
// requests. An exited session keeps 1 MiB of its log in memory; SessionTTL
// after its exit it is reaped (session/state closed, reason reaped; its
// files removed). It does not count against MaxSessions: a session/create
// that needs its room evicts it earlier (evict.go: reason evicted).
//
// With Options.WarmSpares (serve --warm) a session may instead take a
// claude started ahead of need (package proxy/spare; spares.go chooses
// and launches, claim.go adopts): claim_session gives it the session's
// cwd and mode, and its answer stands for initialize's.
//
// MCP in a live session (proxy/mcpsession, sessionmcp.go): a claude process is launched with
// the configuration then in force (--mcp-config; claudeProc.mcpLaunched
// names its servers). A change reaches it through the session's
// pending-apply slot (Server.applyMCP marks each live session; its one
// applier goroutine applies the newest configuration with mcp_set_servers,
// then mcp_status). When the new set lacks a server of mcpLaunched the
// session restarts between turns instead (--resume, turns held). Servers
// a client sends in session/create (mcpServers) give the session a
// configuration of its own (mcphub.Config.ForClient), whose secrets only
// the session's set has. GET /v1/tool-results/... (proxy/toolfiles) serves
// a file the CLI saved in a session's tool-results folder through an
// os.Root (no link leads out).
//
// # Concurrency
//
// Goroutines and their owners: Server.Serve opens the server's components
// in order and closes them in reverse (lifecycle.go: spool, connections,
// sessions, spares, requests, logins, loops, http; each close cancels what the
// component runs and waits for it; nothing adds to another's WaitGroup).
// The http component owns the HTTP server, the loops component the MCP
// and reap loops, the connections component every connection handler
// (registry.handlers); a connection handler runs its wsconn.Conn and owns
// the goroutines of slow requests (client.async), joined by client.serve
// after the connection ended. The requests component shuts the runners of
// proxy/mcpcalls and proxy/historyreq down (running requests answered
// shutting_down) and waits for those replies and the auto-probe loop
// before the sessions and then the connections close. A Session owns,
// per process, a claudecli.Client and the goroutine waiting for its exit,
// plus a restart, the flush of held turns and the applier of MCP changes
// (at most one) and the stop of a suspended claude, all in its wg; its
// broker's permission timers are waited for by Broker.Wait, its idle
// timer by idle.Suspender.Wait; close waits for all three. The reap loop forgets exited
// sessions past SessionTTL. The spares component owns the warm spares'
// pool (its owner goroutine and watchers; proxy/spare); a spare a create
// took is the create's until claimed, then the session's process.
//
// Lock order (a lock is only taken after the ones before it in its
// chain, never the reverse); the locks of the packages named above are in
// their doc.go:
//
//   - Server.mu → Session.mu → eventlog.Hub.mu → client.mu (its subs) →
//     wsconn.Conn.mu (a leaf); Server.mu → mcphub.Hub.mu → client.mu.
//     Server.applyMCP marks sessions (Session.mu) under Server.mu. A
//     scrape (metricsState) takes Server.mu, then each Conn.mu and each
//     Session.mu (one at a time); then, with none held, eventlog.Budget.mu
//     and each Hub.mu; Server.retired is guarded by Server.mu.
//   - eventlog.Budget.mu is taken with no session lock held, before
//     Hub.mu.
//   - mcphub.Hub.applyMu (Server.applyMCP: one configuration installed at a
//     time) is taken with no other lock held; mcphub.Hub.mu under it.
//   - sessionModels.setMu (serializes session/setModel, held across its
//     control request) → Session.mu (not across the control request).
//   - mcpsession.Part.mu (the session's MCP part: serializes Apply and
//     Toggle and guards the servers toggled off; held across their
//     control request, bounded by ControlTimeout) → mcphub.ConfigSource.toggleMu
//     (held by UnrecordedToggle for one live mcp_toggle, and by the
//     source's goroutine around an install) → mcphub.ConfigSource.mu;
//     mcpsession.Part.mu → Session.mu; mcpsession.Part.mu →
//     mcpsession.Part.clientMu.
//   - mcpsession.Part.clientMu guards the session's client configuration;
//     it is taken alone, under Part.mu or under Session.mu, and only a
//     configFile's lock is taken under it.
//   - The broker, the suspender (proxy/idle), the held turns (proxy/held)
//     and the slash commands (proxy/slashcmd) have no lock: Session.mu
//     guards them.
//   - Leaves, taken with nothing of the proxy's held: Server.claudeMu;
//     spare.Pool.mu (the warm spares; see proxy/spare);
//     toolfiles.Blobs.mu; mcphub.Logins.mu; runner.Runner.mu; wsconn.BatchConn.mu
//     and the inbound wsconn.Budget's mu; the locks of proxy/remote. The
//     metrics' own locks (a session counts under Session.mu) take nothing
//     under them.
//
// Queueing a frame never blocks; disk reads of a catch-up hold no lock. A
// frame is encoded once for every subscriber (the hub queues the same
// bytes to each).
//
// # Secrets
//
// Logs use log/slog with constant keys; the token, environment values of
// MCP servers and header values never appear in a log line or a frame.
// Text a tool or server wrote reaches clients, files and the log only
// scrubbed by an mcpconfig.Secrets set (SPEC §10): the configured values
// and the secret-named environment values of ccproxy and of claude's
// environment (mcphub.Hub.EnvSecrets). The hub's set (mcphub.Hub.Scrub)
// and mcpsession.Part.Secrets (the session's own configuration, client servers
// included; cached per configuration) are the two sets. A session scrubs
// the user events that carry tool results with its set
// (mcpsession.Part.ScrubToolResults, on the stdout loop before hub.append: the replay log,
// its spill files and every frame hold the scrubbed event);
// history/read does the same to stored tool results with
// mcphub.Hub.Scrub; the call log gets every entry scrubbed (the session's
// set, then mcphub.Hub.Scrub); the prober scrubs its messages, stderr
// tails and call results. Client frames that are not valid UTF-8 are
// refused whole by protocol.ParseFrame, so no raw client byte is echoed
// in a reply.
package proxy

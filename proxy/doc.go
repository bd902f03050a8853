// Package proxy runs live Claude Code sessions for webviews: one long-lived
// claude process per session, its events numbered, logged and fanned out
// over a websocket, permission prompts brokered, MCP configuration applied
// live, and an MCP status feed. The wire protocol is protocol/SPEC.md
// (package protocol).
//
// # Data flow
//
//	claude stdout ─► stream.Reader ─► stream.Normalizer ─┬─ control_* lines: claudecli.Client (answers to its requests; claude's own → permission broker)
//	  (1 MiB pipe)     lines ≤ cap     (attachments → blob  └─ events: seq, session/event frame built once, turn state ─► hub (eventlog.Hub):
//	                                   store, /v1/blobs)        replay log: memory tail ─(spill)─► disk segments
//	                                                            queued for every live subscriber that keeps up
//	                                                                 │
//	client ◄─ wsconn.BatchConn ◄─ websocket ◄─ wsconn.Conn's write pump (the only writer) ◄── send queue, bounded in bytes and frames
//	   (frames of a batch in one write)                     ◄── pulls from the replay log (memory or disk) while a subscription catches up
//
//	client ─► wsconn.Conn's read pump (ReadFrame, inbound Budget) ─► client.HandleFrame ─► validate (protocol) ─► feature table (features.go) ─► handler ─► stream builders ─► stdin writer ─► claude stdin
//	                                                                                                        └─► its reply (or an error with a code) ─► send queue
//
// The feature table lists each capability once with the request types it
// serves and their handlers; hello's capabilities, the check that a type
// is offered (unknown_type otherwise) and dispatch all read it. A handler
// takes the decoded request and returns its reply; one whose slow part
// runs in the background returns that part (later), runs in a goroutine
// of the connection (async) or under a feature's runner (run, proxy/runner). The
// handlers of subscriptions, session/send, session/interrupt and the MCP
// management, auth and live requests still queue their replies through
// the connection themselves (replies).
// The MCP features' handlers are adapters (mcpfeatures.go) over package
// proxy/mcphub, which holds their logic.
//
//	mcpconfig.Watcher ─► mcphub.Source ─► flags at spawn (--mcp-config, --allowedTools)
//	                                 mcp_set_servers + mcp_status to live sessions when the active servers changed (mcpconfig.Diff; refused, or a server of the process's --mcp-config gone: restart with --resume; per-server errors: logged)
//	                                 mcp/config (when anything changed), mcp/status (with what sessions report and probes find) ─► MCP subscribers, GET /v1/mcp/status
//	                                 mcphub.Config.Resolved ─► probe.Prober ─► mcp/probe, mcp/tools, mcp/call, auto-probes (proxy/mcpcalls)
//
//	session stdout loop ─► calllog.Pairer (assistant tool_use + user tool_result) ─┬─► calllog.Log (JSON lines per project) ─► mcp/log (proxy/mcpcalls)
//	mcp/call result ─► calllog.DirectEntry ────────────────────────────────────────┘
//
// # Sessions
//
// A Session starts `claude -p --input-format stream-json --output-format
// stream-json --verbose --include-partial-messages --replay-user-messages
// --permission-prompt-tool stdio` (plus --model, --permission-mode,
// --resume, and the MCP flags last) through a claudecli.Client (package
// proxy/claudecli: the process in its own process group, the one stdin
// writer, control requests with ids and timeouts, the stdout event stream,
// the exit), with the user's text only ever on stdin. The session is what
// sits on the client, composed of parts with one job each, each in its own
// file: the process (process.go: spawn, the exit watcher, exit reporting,
// close), turns (turnstate.go), the permission broker (broker.go), models
// (model.go), restarts and held turns (restart.go), MCP in the session
// (sessionmcp.go), and usage (proxy/usage, usage.go: tokens and cost from result events,
// the context window from get_context_usage); session/rewind (rewind.go)
// restores files with rewind_files and restarts through the restarts part
// with --resume-session-at; session.go keeps its state and its face to clients
// (events in, turns written, subscriptions). What a session reaches of the
// Server is its sessionEnv (session_env.go: the options it reads, copied;
// a metrics sink; the MCP configuration in force and the status feed; the
// blob store; the call log; the replay logs' budget; the claude launcher),
// built by Server.newSession; it calls nothing else of the Server. It
// sends initialize, then writes turns and control
// requests; a control request claude leaves unanswered for ControlTimeout
// is forgotten (its waiter gets a timeout). Claude's control requests are
// answered at once (can_use_tool goes to the broker; anything else gets an
// error). While a session restarts (an MCP change claude refused or
// cannot make: see "MCP in live sessions"), up to
// 256 turns (the stdin queue's size) are held for the new process; more
// get limit_exceeded. They are written once it has answered initialize,
// and only to the session's current process: if a second restart replaces
// it first, they wait for the next one. Close is stdin EOF, CloseGrace, SIGTERM to the
// group, TermGrace, SIGKILL; whenever claude ends, what is left of its
// group (MCP servers) is killed, and subscribers get session/exited with
// the stderr tail. Claude is located with FindClaude (--claude,
// $CCPROXY_CLAUDE, PATH) and must be MinClaudeVersion or newer. With
// Options.Replay the "CLI" is ccproxy's replay of a recorded session, and
// hello, /v1/health and the log say so (ReplayName) instead of naming a CLI.
//
// The broker (broker.go) makes each can_use_tool a
// permission/request of a kind: a tool use, AskUserQuestion's questions, or
// ExitPlanMode's plan; questions and plans never time out. A tool the
// current permission rules allow (MCPConfig.AllowedTools minus
// DisallowedTools: the settings' permissions.allow/deny, plus every active
// server with serve --allow-mcp-tools) is allowed without asking. An answer
// becomes claude's reply: answers are added to the question's input as
// "answers" (each key must be a question asked, checkAnswers); "always" is checked like any answer, then claims the request
// (permission.answering, under Session.mu: other answers get
// already_resolved, the timeout waits for the claim), has the MCP source
// write the suggested rules to the session's .claude/settings.local.json
// (mcphub.ConfigSource.AllowRules, outside Session.mu), and only then answers,
// adding them as updatedPermissions with destination "session", so claude
// applies them at once (without such a source, destination
// "localSettings": claude writes them itself). A failed write releases the
// claim (the request stays pending, or is denied if its timeout passed
// meanwhile). Logs name the rules' tools, never a rule's content (a Bash
// prefix may hold a token). The permission mode (broker.mode, under
// Session.mu) is what claude last reported in system/init or
// system/status, or what session/setPermissionMode (set_permission_mode)
// set; a restarted process starts in it, and session/state and
// session/list carry it. While the session restarts, setPermissionMode
// keeps the mode for the new process, refusing bypassPermissions (as
// claude would) unless the session is in it already.
//
// The model (model.go, under Session.mu): the models of claude's
// initialize reply (value, displayName, description; at most
// protocol.MaxModels, texts cut at their bounds, the cut logged) and the
// model the session runs: the value last chosen (session/create's model,
// session/setModel's set_model) while system/init reports what it
// resolves to, else the id system/init reports. Both go in session/state
// (pushStateLocked, as the permission mode) and the subscribe reply; a
// restarted process is launched with the chosen model. While the session
// restarts, setModel keeps the model for the new process. models.setMu
// serializes setModel calls (taken before Session.mu, held across the
// control request), so the model reported is the last one claude took. A
// subscription notes the key of the state it was told (stateKeyLocked:
// state, mode, model, models), so one catching up is told a change of any
// of them when it turns live.
//
// # State
//
// A session's state follows claude's events, not what was sent (claude
// also starts turns by itself, e.g. when a background task ends): a turn
// starts with its system/init (running) and ends with its result (idle,
// unless a user turn written meanwhile is still waiting for its turn).
// Which turn took a user turn is read from its replay
// (--replay-user-messages). A restart for an MCP change waits until
// no turn is in flight. See turnstate.go.
//
// # Replay and slow clients
//
// Each session's hub (hub.go) is an eventlog.Hub: the session's event log
// and its subscriptions, with the session/gap frame and the subscriptions
// of clients added here. Package proxy/eventlog's doc.go gives the data
// flow and locks of the log, its spill files (a privdir.Run under
// SpoolDir), the memory budget of all sessions and the hub: every event
// gets the next seq and goes into the log, the only buffer of events
// (ReplayBytes per session in memory, ReplayMemoryBytes for all sessions,
// ReplayDiskBytes per session on disk; beyond it, or when a spill fails,
// events are dropped, the failure logged once per session and counted in
// ccproxy_replay_log_spill_failures_total, and a subscriber behind them
// gets session/gap). An exited session keeps 1 MiB of its log in memory;
// SessionTTL after its exit it is reaped (subscribers get session/state
// closed, reason reaped; its files are removed). It does not count
// against MaxSessions: a session/create that needs its room evicts it
// earlier (evict.go: reason evicted).
//
// A subscription (hub.go) is the eventlog.Subscriber of its hub and the
// wsconn.Source of its client's connection: session/subscribe queues the
// reply (and a session/gap), then the client's write pump pulls logged
// frames in chunks until the end of the log, where, under the session's
// lock, the subscription turns live (Session.pull) and the pending
// permission requests follow. A live subscription whose client's queue
// (package proxy/wsconn: SendQueueBytes, SendQueueFrames) is full goes
// back to catching up; pushes made while it is behind keep their place
// among the events. So a client that keeps reading never loses an event,
// nothing is sent twice, and reading claude's stdout never waits for a
// client. The drops of slow clients (1008, write and pong timeouts) are
// wsconn's; pushes kept while behind over 1 MiB on one subscription close
// the client 1008 (Subscriber.Lagged). A client that reconnects resumes
// with afterSeq.
//
// Inbound frames take memory from one budget for all connections
// (InboundBytes) while they are read and handled; a frame that would
// exceed it is discarded and refused with limit_exceeded. A discarded
// frame (refused, or over MaxFrameBytes) is answered with its id when its
// first 4 KiB show it (wsconn.ReadFrame, protocol.PeekID; a fixed look per frame,
// outside the budget), so that the client can fail that request.
//
// # Probes, direct calls and the call log
//
// Package proxy/mcpcalls serves mcp/probe, mcp/tools, mcp/call and mcp/log,
// runs the auto-probes (Options.AutoProbe) and keeps the call log
// (Options.CallLogDir); its doc.go has the flow, goroutines and locks.
// calls.go wires it: the prober (Options.MCPProbe: stdio servers get
// claude's environment without the token, binary parts of call results go
// to the blob store), the MCP status hub behind mcpcalls.Status (probe
// results counted in the metrics, then recorded as observations of origin
// probe, SPEC §8), the secret set, and each session's call pairing
// (forSession). mcp/test runs under its runner too.
//
// # Session history
//
// Package proxy/historyreq serves history/list and history/read from
// <Options.HistoryHome>/.claude/projects (its doc.go has the flow);
// calls.go hands it the blob store and mcphub.Hub.Scrub. Options.HistoryHome
// "-" offers no history capability.
//
// GET /v1/tool-results/<claude session>/<name> (toolresults.go) serves a file
// the CLI saved in that session's tool-results folder, found through an
// os.Root of <HistoryHome>/.claude/projects (no link leads out); it keeps no
// state and takes no lock.
//
// # MCP in live sessions (sessionmcp.go)
//
// A claude process is launched with the configuration then in force
// (--mcp-config; claudeProc.mcpLaunched names its servers, fixed for the
// life of the process). A later change reaches it through
// the session's pending-apply slot: Server.applyMCP marks each live
// session (Session.markApply, under Session.mu), and the session's one
// applier goroutine (applyPending, started by the mark unless it runs,
// joined by the session's close) runs Session.applyCurrentServers while
// marks keep coming, so changes that arrive while a control request holds
// sessionMCP.mu wait as one, and the newest configuration is the one
// applied: mcp_set_servers with the full set (less the
// servers toggled off in the session), then mcp_status. The CLI's
// mcp_set_servers manages a set of its own beside the --mcp-config servers
// and never removes one of those (docs/CLI-NOTES.md), so when the new set
// lacks a server of mcpLaunched (removed from a file, mcp/remove,
// rejected, disabled by policy) the session logs it at info and restarts
// between turns instead (requestRestart: --resume, turns held meanwhile),
// launched with the new configuration. A restart rather than mcp_toggle:
// a toggled-off server stays in the process with its old definition, a
// later mcp_set_servers listing the name again (the server added back,
// maybe changed) enables it again, and the CLI records the toggle in
// ~/.claude.json; the new process has exactly the servers in force, and
// the server added back later reaches it live like any other. Servers
// that came only through mcp_set_servers are removed live. A server
// toggled off in the session (sessionMCP.off) that is no longer in the
// configuration is forgotten by reapplyMCPOff after the restart.
//
// # Servers a client sends (sessionmcp.go)
//
// session/create may carry mcpServers, definitions by name (`ccproxy acp`
// fills it from ACP's session/new). Server.clientServers checks them with
// mcpconfig.ParseClientServers (a bad one: bad_request naming the server
// and the field) and refuses them when the mcphub.Source's configuration has
// no ForClient (no MCP configuration of the proxy's own). The session
// keeps them (sessionConfig.client) and sessionMCP.config gives it its own
// configuration: mcphub.Config.ForClient merges them into the proxy's
// (mcpconfig.Config.WithClient: below every file scope, approved only by
// the source's TrustClient) with an --mcp-config file of its own, made
// again when the proxy's configuration changes (the old one retired) and
// retired when the session ends (close, reap). That configuration is the
// one the session spawns with, sends with mcp_set_servers and whose rules
// the broker applies; mcp/config and mcp/status keep showing the files'.
// The reply to session/create says what became of each server
// (ClientStatus); a server not started is also logged, with the reason.
// Their secrets are not in mcphub.Hub.Scrub's set: the session's set
// (sessionMCP.secrets) has them, and the session's call pairing
// (sessionCalls.scrub, calls.go) masks them in the call log's entries.
//
// # MCP status, management and sign-in (proxy/mcphub)
//
// The MCP status and its subscribers (mcphub.Hub; Server.mcp), the
// configuration source of package mcpconfig (mcphub.ConfigSource), the
// requests that change the configuration (mcp/add, mcp/update,
// mcp/remove, mcp/test, mcp/trust, persisted mcp/toggle: mcphub.Manage),
// the live mcp/toggle and mcp/reconnect (mcphub.Live; a Session is an
// mcphub.LiveSession through liveSession, session_live.go) and the OAuth
// sign-in through the CLI (mcp/login, mcp/logout: mcphub.Logins) live in
// proxy/mcphub: its doc.go has their flows, goroutines and locks.
// Server.mcpf holds the components; mcpfeatures.go adapts them to the
// feature table, a connection subscribing as an mcphub.Subscriber; Serve
// closes the logins (mcphub.Logins.Close) at shutdown, before it closes
// the sessions and the connections. mcp/test probes through the calls'
// runner (proxy/runner), within the MaxMCPRequests slots of mcp/probe. A live
// mcp/toggle's choice is kept by the session in sessionMCP.off (under sessionMCP.mu),
// left out of its later mcp_set_servers (which would enable the server
// again) and toggled off again in a restarted process (reapplyMCPOff, run
// by the restart).
//
// # Reaching the proxy from other machines
//
// Remote access lives in proxy/remote (its doc.go): the Host and Origin
// rules, the token and login-cookie check, login codes and their rate
// limit, TLS on the listener and the certificate helpers. New makes a
// remote.Gate from the Options; Serve readies its listener through it
// (an address off loopback without Options.TLS is refused), Handler wraps
// the mux in Gate.Check and the private endpoints in Gate.RequireAuth, and
// serves /v1/login and /v1/login/code with the Gate's handlers. GET
// /v1/health summarizes the proxy (Health) for `ccproxy status`.
//
// # Metrics
//
// GET /metrics (metrics.go; token required) serves a Prometheus registry of
// the Server's own. States (sessions by state, clients, pending permission
// requests and control requests, replay-log bytes, MCP servers by status,
// websocket frames and bytes) are read by a collector at scrape time; events
// (events logged, drops, permission waits, control latency from
// claudecli.Config.OnControlDone, probes, exits and restarts, normalization
// time from claudecli.Config.OnNormalized, sampled 1 line in 64) are counted
// where they happen by one-line calls into metrics.go. Frames in and out
// are counted by each wsconn.Conn (out under its lock as the write pump
// takes them: no shared atomic per frame); a client's counts go to
// Server.retired when it is removed. Label values come from fixed sets ("other" beyond): never a
// session id or session text.
//
// # Concurrency
//
// Goroutines and their owners: Server.Serve opens the server's components
// in order and closes them in reverse (lifecycle.go: spool, connections,
// sessions, requests, logins, loops, http; each close cancels what the
// component runs and waits for it; nothing adds to another's WaitGroup).
// The http component owns the HTTP server, the loops component the MCP
// and reap loops, the connections component every connection handler
// (registry.handlers); a connection handler runs its wsconn.Conn (the read
// pump on the handler's goroutine, the write pump joined by Conn.Run; see
// proxy/wsconn's doc.go) and owns the goroutines of slow requests
// (client.async: the slow part of a request the feature table marks async
// or later), joined by client.serve after the connection ended. The slow requests of
// MCP probes and calls (mcp/probe, mcp/tools, mcp/call, mcp/log, mcp/test)
// and of history (history/list, history/read) go through the runner of
// proxy/mcpcalls and of proxy/historyreq (package proxy/runner: bounded
// slots, limit_exceeded beyond); mcpcalls owns the auto-probe loop. On
// shutdown the requests component shuts both down (running requests
// cancelled and answered shutting_down, new ones refused) and waits for
// those replies and the auto-probe loop (the call log is then closed),
// before the sessions and then the connections close. A Session owns, per process, a
// claudecli.Client (its stdin writer, stdout and stderr readers and waiter;
// the stdout reader calls the session's handlers) and the goroutine
// waiting for its exit, plus a restart, the flush of held turns and the
// applier of MCP changes (at most one: the pending-apply slot), all in its
// wg, and permission timers in its broker's own wg (close waits for
// both). The reap loop forgets exited sessions past SessionTTL.
// mcphub.ConfigSource owns the goroutine forwarding its Watcher's events.
// The locks of proxy/mcphub (Hub.applyMu, Hub.mu, ConfigSource.toggleMu
// and mu, Logins.mu) are in its doc.go.
//
// Lock order (a lock is only taken after the ones before it in its
// chain, never the reverse):
//
//   - Server.mu → Session.mu → eventlog.Hub.mu → client.mu (its subs) →
//     wsconn.Conn.mu (a leaf); Server.mu → mcphub.Hub.mu → client.mu.
//     Server.applyMCP marks sessions (Session.mu) under Server.mu. The
//     metrics collector takes Server.mu, then each Conn.mu and each
//     Session.mu (one at a time); then, with none held, eventlog.Budget.mu
//     and each Hub.mu; Server.retired is guarded by Server.mu.
//   - eventlog.Budget.mu is taken with no session lock held, before
//     Hub.mu (the hub is the budget's eventlog.Member; Hub.mu guards its
//     log and its subscriptions, see eventlog's doc.go).
//   - mcphub.Hub.applyMu (Server.applyMCP: one configuration installed at a
//     time) is taken with no other lock held; mcphub.Hub.mu under it.
//   - models.setMu (serializes session/setModel, held across its control
//     request) → Session.mu (not across the control request).
//   - sessionMCP.mu (serializes Session.applyCurrentServers and
//     Session.toggleMCP and guards sessionMCP.off; held across their
//     control request, bounded by ControlTimeout) → mcphub.ConfigSource.toggleMu
//     (held by UnrecordedToggle for one live mcp_toggle, and by the
//     source's goroutine around an install) → mcphub.ConfigSource.mu;
//     sessionMCP.mu → Session.mu; sessionMCP.mu → sessionMCP.clientMu.
//   - sessionMCP.clientMu guards the session's client configuration; it is
//     taken alone, under sessionMCP.mu or under Session.mu, and only a
//     configFile's lock is taken under it.
//   - Leaves, taken with nothing of the proxy's held: Server.claudeMu;
//     blobStore.mu; mcpLogins.mu (the map of running mcp/login runs and
//     its closed flag); runner.Runner.mu (see proxy/runner); wsconn.BatchConn.mu and the inbound wsconn.Budget's mu
//     (below); the locks of proxy/remote (logins.mu, loginLimiter.mu),
//     whose Policy (served hosts, own origins) is written before the HTTP
//     server starts and only read after. The metrics' own locks (a
//     session counts under Session.mu) take nothing under them.
//
// Queueing a frame never blocks; disk reads of a catch-up hold no lock.
//
// The write pump's batches (wsconn.BatchConn) and the locks of
// proxy/wsconn are in its doc.go; each is a leaf or taken alone. A frame
// is encoded once for every subscriber (the hub queues the same bytes to
// each). Each connection has its own 4 KiB write
// buffer in the library (a frame's start is copied there, the rest passed
// through); a shared pool of them cost an allocation per frame.
//
// Logs use log/slog with constant keys; the token, environment values of
// MCP servers and header values never appear in a log line or a frame.
// Text a tool or server wrote reaches clients, files and the log only
// scrubbed by an mcpconfig.Secrets set (SPEC §10): the configured values
// and the secret-named environment values of ccproxy and of claude's
// environment (mcphub.Hub.EnvSecrets, mcpconfig.ProcessSecrets at start).
// The hub's set (the configuration in force's set with EnvSecrets, an
// atomic pointer set under mcphub.Hub.mu when the configuration changes;
// mcphub.Hub.Scrub) and sessionMCP.secrets (the session's own
// configuration, client servers included, with envSecrets; cached per
// configuration in an atomic pointer, so Scrub's matcher is built once
// per set) are the two sets. The prober scrubs its messages, stderr tails
// and call results; a session scrubs the user events that carry tool
// results with its set (scrubToolResults, on the stdout loop before
// hub.append: the replay log, its spill files and every frame hold the
// scrubbed event; content and tool_use_result alike, Bash's output as an
// MCP tool's), history/read does the same to stored tool results with
// mcphub.Hub.Scrub, mcphub.Hub.Scrub masks the errors sessions report in
// mcp_status, and the call log gets every entry's input and output
// scrubbed (the session's set, then mcphub.Hub.Scrub in logEntry); the
// mcp/log reply is scrubbed again as it is read.
// Client frames that are not valid UTF-8 are refused whole by
// protocol.ParseFrame, so no raw client byte is echoed in a reply.
package proxy

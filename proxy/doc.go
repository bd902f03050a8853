// Package proxy runs live Claude Code sessions for webviews: one long-lived
// claude process per session, its events numbered, logged and fanned out
// over a websocket, permission prompts brokered, MCP configuration applied
// live, and an MCP status feed. The wire protocol is protocol/SPEC.md
// (package protocol).
//
// # Data flow
//
//	claude stdout ─► stream.Reader ─► stream.Normalizer ─┬─ control_* lines: claudecli.Client (answers to its requests; claude's own → permission broker)
//	  (1 MiB pipe)     lines ≤ cap     (attachments → blob  └─ events: seq, session/event frame built once, turn state ─► hub:
//	                                   store, /v1/blobs)        replay log: memory tail ─(spill)─► disk segments
//	                                                            queued for every live subscriber that keeps up
//	                                                                 │
//	client ◄─ wsconn.BatchConn ◄─ websocket ◄─ write pump (the only writer) ◄── send queue, bounded in bytes and frames
//	   (frames of a batch in one write)                     ◄── pulls from the replay log (memory or disk) while a subscription catches up
//
//	client ─► read pump (wsconn.ReadFrame, inbound wsconn.Budget) ─► validate (protocol) ─► feature table (features.go) ─► handler ─► stream builders ─► stdin writer ─► claude stdin
//	                                                                                                        └─► its reply (or an error with a code) ─► send queue
//
// The feature table lists each capability once with the request types it
// serves and their handlers; hello's capabilities, the check that a type
// is offered (unknown_type otherwise) and dispatch all read it. A handler
// takes the decoded request and returns its reply; one whose slow part
// runs in the background returns that part (later), runs in a goroutine
// of the connection (async) or under a feature's asyncRunner (run). The
// handlers of subscriptions, session/send, session/interrupt and
// mcp/login still queue their replies through the connection themselves
// (replies). The MCP features' handlers are adapters (mcpfeatures.go)
// over package proxy/mcphub, which holds their logic.
//
//	mcpconfig.Watcher ─► mcphub.Source ─► flags at spawn (--mcp-config, --allowedTools)
//	                                 mcp_set_servers + mcp_status to live sessions when the active servers changed (mcpconfig.Diff; refused, or a server of the process's --mcp-config gone: restart with --resume; per-server errors: logged)
//	                                 mcp/config (when anything changed), mcp/status (with what sessions report and probes find) ─► MCP subscribers, GET /v1/mcp/status
//	                                 mcphub.Config.Resolved ─► probe.Prober ─► mcp/probe, mcp/tools, mcp/call, auto-probes
//
//	session stdout loop ─► calllog.Pairer (assistant tool_use + user tool_result) ─┬─► calllog.Log (JSON lines per project) ─► mcp/log
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
// sits on the client: turns, state, the permission broker, restarts and
// MCP application. It sends initialize, then writes turns and control
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
// prefix may hold a token). The permission mode (Session.mode, under
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
// restarts, setModel keeps the model for the new process. Session.modelMu
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
// Each session's hub (hub.go) holds its event log (an eventlog.Log; the
// log, its spill files, the spool and the memory budget of all sessions
// are package proxy/eventlog, whose doc.go gives their data flow and
// locks) and its subscriptions. Every event gets the next seq and goes
// into the log, the only buffer of events: its newest frames in memory (ReplayBytes per session, and
// ReplayMemoryBytes for all sessions together: over it, exited sessions'
// frames are spilled first, then the oldest), the older ones in an
// append-only segment file per session in this process's spool directory
// (a privdir.Run under SpoolDir: 0700, locked while the process lives, on
// Windows too; a dead process's is removed at start)
// with an in-memory offset index, read back with ReadAt. Only beyond
// ReplayDiskBytes per session are events dropped, or when a spill fails (a
// full disk): the frames on disk are then given up, the failure logged
// once per session and counted (ccproxy_replay_log_spill_failures_total),
// and a subscriber behind them gets session/gap. An exited session keeps
// 1 MiB of its log in memory; SessionTTL after its exit it is reaped
// (subscribers get session/state closed, reason reaped; its files are
// removed). It counts against MaxSessions until then.
//
// session/subscribe queues the reply (and a session/gap when the log no
// longer reaches back), then the client's write pump pulls logged frames
// itself, in chunks (from disk without any lock held), until it reaches
// the end of the log; at that moment, under the session's lock, the
// subscription turns live and the pending permission requests follow. A
// live subscription whose client's queue is over its bound (SendQueueBytes
// or SendQueueFrames; the frames the write pump has taken and not yet
// written count) is not dropped: it goes back to catching up from
// the event that did not fit. So a client that keeps reading never loses
// an event, nothing is sent twice, and reading claude's stdout never waits
// for a client. While it is behind, the pushes of its session
// (permission/request, permission/resolved, session/state,
// session/exited) are kept on the subscription with the seq they follow
// and pulled with the events, each right after its event: it receives
// the same order as a live client. A client whose write makes no progress
// for WriteWait is closed; one whose queue of replies and pushes is twice
// over its bound, or whose pushes kept while behind exceed 1 MiB on one
// subscription, gets 1008 (if its connection still takes the close frame).
// Each drop is logged as a WARN with its reason and bound (kill,
// writeError, readError). A client that reconnects resumes with afterSeq.
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
// When the mcphub.Source's configurations carry the resolved configuration
// (mcphub.ConfigSource's do), the proxy offers mcp/probe, mcp/tools and
// mcp/call through a probe.Prober (Options.MCPProbe): stdio servers get
// claude's environment without the token, and binary parts of call
// results go to the blob store like session attachments. These requests
// block for up to the probe or call timeout, so each runs in a goroutine
// of its connection through the MCP asyncRunner (runner.go), at most
// Options.MaxMCPRequests at once (limit_exceeded beyond), with a context
// cancelled when the connection ends or the proxy shuts down (the reply
// is then shutting_down). Probe results are MCP status observations
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
// # Session history
//
// history/list and history/read (history.go) read the session files the
// CLI keeps under <Options.HistoryHome>/.claude/projects through one
// history.Store (its index of files by size, mtime and inode lives as long
// as the Server):
//
//	history/list ─► Store.List (project: the request's, else Options.Project; or all) ─► reply
//	history/read ─► Store.Read (MaxBytes = HistoryReplyBytes: it stops reading there;
//	                stream.Normalizer, attachments ─► blobStore ─► /v1/blobs)
//	             ─► cut to HistoryReplyBytes at the last place the store marks (Event.Break) ─► reply
//
// GET /v1/tool-results/<claude session>/<name> (toolresults.go) serves a file
// the CLI saved in that session's tool-results folder, found through an
// os.Root of <HistoryHome>/.claude/projects (no link leads out); it keeps no
// state and takes no lock.
//
// Each request runs in a goroutine of its connection through the history
// asyncRunner (historyReqs.reqs, runner.go), at most maxHistoryRequests at
// once over all connections (beyond, limit_exceeded); it ends with the
// read, when its connection ends (no reply), or when the proxy shuts down
// (shutting_down). Options.HistoryHome "-" offers no history capability.
//
// # MCP in live sessions (sessionmcp.go)
//
// A claude process is launched with the configuration then in force
// (--mcp-config; claudeProc.mcpLaunched names its servers, fixed for the
// life of the process). A later change reaches it through
// Session.applyCurrentServers: mcp_set_servers with the full set (less the
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
// toggled off in the session (mcpOff) that is no longer in the
// configuration is forgotten by reapplyMCPOff after the restart.
//
// # Servers a client sends (sessionmcp.go)
//
// session/create may carry mcpServers, definitions by name (`ccproxy acp`
// fills it from ACP's session/new). Server.clientServers checks them with
// mcpconfig.ParseClientServers (a bad one: bad_request naming the server
// and the field) and refuses them when the mcphub.Source's configuration has
// no ForClient (no MCP configuration of the proxy's own). The session
// keeps them (sessionConfig.client) and Session.mcpConfig gives it its own
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
// (Session.secrets) has them, and the session's call pairing
// (sessionCalls.scrub) masks them in the call log's entries.
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
// asyncRunner, within the MaxMCPRequests slots of mcp/probe. A live
// mcp/toggle's choice is kept by the session in mcpOff (under its mcpMu),
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
// where they happen by one-line calls into metrics.go. Frames out are
// counted per client under client.mu as the write pump takes them (no
// shared atomic per frame); a client's counts go to Server.retired when it
// is removed. Label values come from fixed sets ("other" beyond): never a
// session id or session text.
//
// # Concurrency
//
// Goroutines and their owners: Server.Serve owns the HTTP server, the MCP
// loop, the auto-probe loop and every connection handler (joined before
// Serve returns); a connection handler runs the read pump and owns the
// write pump and the goroutines of slow requests (client.async: the slow
// part of a request the feature table marks async or later). The slow requests of
// MCP probes and calls (mcp/probe, mcp/tools, mcp/call, mcp/log, mcp/test)
// and of history (history/list, history/read) go through one asyncRunner
// per feature (runner.go; Server.runners): bounded slots (limit_exceeded),
// a context of its own, and a WaitGroup of the running requests. On
// shutdown Serve shuts every runner down (running requests cancelled and
// answered shutting_down, new ones refused with shutting_down), closes the
// sessions, then waits on each runner's WaitGroup, so those replies are
// queued before the connections close. A Session owns, per process, a
// claudecli.Client (its stdin writer, stdout and stderr readers and waiter;
// the stdout reader calls the session's handlers) and the goroutine
// waiting for its exit, plus permission timers, a restart and the flush of
// held turns (all joined by close); Serve also owns the reap loop (exited
// sessions past SessionTTL). Lock order: Server.mu, then Session.mu or
// mcphub.Hub.mu (after Hub.applyMu), then hub.mu, then client.mu; eventlog.Budget.mu is taken with no
// session lock held, before hub.mu (the hub is the budget's
// eventlog.Member; hub.mu guards its eventlog.Log, see eventlog's doc.go). The metrics collector follows it:
// Server.mu, then each client.mu and each Session.mu (one at a time); then,
// with none held, eventlog.Budget.mu and each hub.mu; Server.retired is guarded
// by Server.mu. Queueing a frame never blocks; disk
// reads of a catch-up hold no lock. The locks of proxy/remote (logins.mu,
// loginLimiter.mu) are leaves taken alone, with none of the proxy's held;
// its Policy (served hosts, own origins) is written before the HTTP server
// starts and only read after.
// The locks of proxy/mcphub (Hub.applyMu, Hub.mu, ConfigSource.toggleMu
// and mu, Logins.mu) are in its doc.go. Session.mcpMu serializes
// applyCurrentServers and toggleMCP and guards mcpOff; it is held across
// their control
// request (bounded by ControlTimeout) and taken before Session.mu.
// asyncRunner.mu orders its
// context's cancellation and each WaitGroup.Add before shutdown; it is taken
// alone (a reply is queued after it is released).
// Session.clientMu guards the session's client configuration; it is taken
// alone or under Session.mu, and only a configFile's lock is taken under it.
// Session.modelMu serializes session/setModel; it is taken with no other
// lock held, and Session.mu is taken under it (not across the control
// request).
//
// The write pump sends what it finds queued (or pulls) as one batch: the
// websocket library writes each frame to the connection's wsconn.BatchConn, which
// gathers them in a pooled buffer of at most wsconn.BatchBytes (64 KiB) and writes
// it with one write(2), a larger frame with the gathered bytes in one
// writev(2). A batch is only what was already waiting, so it adds no
// latency; BatchConn.mu orders the pump's flush with a pong the read pump
// writes meanwhile. It is taken with no other lock held (by the websocket
// library's writes and the pump's Begin/Flush), and held across a network
// write, as the library's own write lock is. The inbound wsconn.Budget's
// mu is taken alone, by the read pumps. A frame is encoded once for every subscriber (the hub
// queues the same bytes to each). Each connection has its own 4 KiB write
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
// mcphub.Hub.Scrub) and Session.secrets (the session's own
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

// Package acp makes ccproxy an Agent Client Protocol agent (`ccproxy acp`):
// editors that speak ACP (Zed, JetBrains IDEs, Neovim plugins) spawn it and
// talk JSON-RPC 2.0 over its stdio. The protocol side is
// github.com/coder/acp-go-sdk (types generated from the ACP schema,
// protocol version 1); this package maps it onto ccproxy sessions.
//
// # Data flow
//
//	editor ─ JSON-RPC (stdin) ─► guard (malformed lines answered -32700/-32600; Agent.order) ─► sdk.AgentSideConnection ─► Agent methods ─► client.Request ─► websocket ─► ccproxy (protocol)
//	                                                           session/new → session/create {cwd, mcpServers} + session/subscribe
//	                                                           session/prompt → session/send, then waits for the turn's result
//	                                                           session/cancel → session/interrupt; session/set_mode → session/setPermissionMode
//	                                                           session/load → history/read pages ─► Mapper (history mode) ─► session/update,
//	                                                                          then session/create {resume} + subscribe (ACP id = the Claude session id)
//	                                                           session/resume → history/read (one event: is it there?), then as session/load
//	                                                           session/fork → session/create {resume: the Claude session of an open session, or a stored one (as session/resume checks it), fork} + subscribe (fork.go)
//	                                                           session/list → history/list {project or all, cursor} ─► SessionInfo (+ _meta.ccproxy.openAs)
//
//	ccproxy ─ websocket ─► client read loop ─► the session's push handler (Agent.push):
//	                         session/event ─► Mapper.Map ─► session/update notifications (stdout); a result ends the waiting prompt
//	                         session/state (permissionMode) ─► current_mode_update; exited/closed ends the waiting prompt
//	                         session/commands ─► available_commands_update (Mapper.ProxyCommands)
//	                         a result ─► usage_update (used/size, cost; usage.go) before the prompt response, which carries the turn's usage
//	                         permission/request ─► goroutine: session/request_permission ─► permission/respond
//	                         permission/resolved ─► withdraws the editor's prompt (its context is cancelled)
//
// The client (protocol/client) is the same websocket client whether the proxy runs in this
// process (cmd/ccproxy starts a proxy.Server on a loopback port with a
// random token, configured like serve) or is a running `ccproxy serve`
// (--connect; DialTLS takes the TLS configuration of an https one, e.g. a
// self-signed certificate pinned by its fingerprint): the editor's sessions
// are ordinary ccproxy sessions, which the web UI and other clients can
// subscribe to. An ACP session id is the
// id of its first ccproxy session, except for a loaded or resumed session,
// whose ACP id is the Claude session id it was loaded from (session.acpID);
// its ccproxy session (session.id) stays the same for its life. Loading or
// resuming a Claude session again closes the ccproxy session this agent
// had open for it, whether under that id or as a session/new whose Claude
// session id (session.claudeID: the resumed one at open, else from
// session/state) it is: one claude per
// stored session.
//
// # Idle sessions: suspend and resume
//
// Editors keep a session per thread and rarely close one, while each
// holds a claude (some 190 MiB). The proxy suspends an idle session itself
// (proxy/suspend.go, SPEC §5.6): its claude stops, the ccproxy session
// stays (state suspended, seq numbers and subscribers kept), and the next
// session/send, setPermissionMode or setModel resumes it with claude
// --resume in its cwd, mode and model, with its MCP servers. So the agent
// has nothing of its own to do: a prompt, set_mode or model change of a
// suspended session goes to the proxy like any other, nothing is replayed
// to the editor, and a suspended session does not count against the
// proxy's limit of sessions. `ccproxy acp` passes its --idle-timeout (a
// serve flag: 10 minutes by default, at least 1 s, 0 never) to the proxy
// it runs in process; with --connect the running serve's --idle-timeout
// applies (acp refuses the flag there).
//
// # Secrets in tool output
//
// Live tool output comes in the proxy's session/event frames, and stored
// tool output (session/load) in its history/read replies: both masked by
// the proxy with its one secret set (SPEC §10: its MCP configuration's
// secrets, its own and claude's secret-named environment values), so the
// agent masks nothing itself, and with --connect the running serve's set
// applies.
//
// # Stored sessions (session/load, session/resume, session/list)
//
// All three read the proxy's own history over the connection
// (history/list and history/read, SPEC §3), like every other client of
// the proxy: with --connect, the running serve's sessions on its machine;
// stored tool results masked by the proxy with the secrets of its MCP
// configuration; attachments as /v1/blobs urls, fetched with Client.Blob
// as live ones are. They are offered in initialize (loadSession,
// sessionCapabilities.list and .resume) only when the proxy's hello
// announces the history capability. session/load and session/resume
// share continueStored: the editor's MCP servers are checked
// (clientServers), the session is read (replayStored) under cwd's project
// folder, then under any (an unknown or malformed id, the proxy's
// not_found or bad_request, is -32602 naming it; so is one with no
// readable event, empty or garbage, which claude could not resume
// either), load replays it (the user's prompts as user_message_chunk, but
// not the texts the CLI stored as user messages in the user's place: an
// interrupt's marker, a background task's notice; cliNotice), and a
// ccproxy session is created with resume. Live and loaded alike, the
// CLI's result of an agent started in the background (its words for
// claude alone: "This tool result is internal metadata…", the agent's
// id, its output file) reaches the editor as "Started in the background."
// without raw output (backgroundLaunch, the web UI's rule). session/list is one
// history/list page (its default size), newest first, of every project
// (all) or of an absolute cwd (else -32602); its nextCursor is the
// proxy's cursor, passed through (a bad one, bad_request, is -32602).
// Each entry: sessionId the Claude session id, cwd the session's (the
// requested cwd for a session whose records name none; with no cwd asked
// for, such a session is left out: its folder name cannot be turned back
// into a path), title history's (the CLI's summary, else the first
// prompt), updatedAt the last record's time (RFC 3339, milliseconds, UTC),
// and for a session this agent has open, _meta.ccproxy.openAs, its ACP
// session id. A session of this agent is listed once claude has written it
// (after its first prompt).
//
// # Forks (fork.go)
//
// session/fork (unstable in ACP; advertised as sessionCapabilities.fork)
// continues a conversation as a new Claude session: the proxy's
// session/create {resume, fork}, claude --resume ID --fork-session. Its
// sessionId is a session of this agent (forked from its Claude session,
// which claude says at the first prompt: before that there is nothing to
// fork, -32602) or a stored Claude session (checked as session/resume
// checks it, so only with the proxy's history). The original is left as it
// was: open, suspended or stored, it is not evicted (open does not take a
// fork for a second claude of the same session: the fork's Claude session
// id is unknown until its claude says it), and a later prompt of it does
// not see the fork's turns. The fork's ACP id is its ccproxy session id,
// as for session/new.
//
// # The editor's MCP servers (mcp.go)
//
// session/new, session/load, session/resume and session/fork may carry mcpServers
// (stdio; http and sse, advertised in initialize's mcpCapabilities; not
// acp). clientServers turns them into session/create's mcpServers, an
// object of .mcp.json definitions by name in the order sent, and checks
// them first with mcpconfig.ParseClientServers, so that a bad one
// (relative command path, unknown transport, empty or repeated name, bad
// URL, a variable or header given twice) is -32602 naming its index, name
// and field. The proxy checks them again and decides: it merges them below
// every config file (a file's server of the same name wins) and starts
// them only when its MCP source trusts client servers (ccproxy acp
// --trust-client-mcp; with --connect, the running proxy's policy). Their
// tools are asked through the broker like any server's. The reply's
// mcpServers (what became of each) is logged for the ones not started and
// returned as the response's _meta.ccproxy.mcpServers. A proxy error
// bad_request is -32602 to the editor (rpcError), any other -32603. The
// definitions may hold secrets (env, headers): they go to the proxy only,
// never to a log.
//
// The Mapper turns normalized events (protocol SPEC §7) into ACP
// updates: text and thinking from stream_event deltas (a whole assistant
// message whose deltas were seen is not sent again), tool uses as
// tool_call (kind, title, locations; Edit/Write with a diff of their
// input), tool results as tool_call_update (text, image attachments as
// image blocks fetched from /v1/blobs, Edit/Write diffs from the CLI's
// structuredPatch), TodoWrite as plan, system/init and commands_changed as
// available_commands_update and current_mode_update (changes only; the
// commands only until the proxy's session/commands, which it prefers), and a
// result as the stop reason (success: end_turn, or max_tokens / refusal
// from stop_reason; error_max_turns: max_turn_requests; an interrupt:
// cancelled; other errors: a JSON-RPC error with the CLI's text).
//
// # Ready at session/new (announce.go)
//
// session/new answers at once, while the proxy starts claude. Claude says
// its slash commands and models in its answer to initialize, before any
// turn (docs/CLI-NOTES.md); the proxy passes them on (session/commands,
// session/state models), and they become available_commands_update and
// the model config option (config_option_update) before the first prompt.
// An update about a new session (session/new, session/fork) must not
// reach the editor before the answer naming it: the session's pushes
// wait (awaitShown, on the read loop) until lockedWriter has written that
// answer. A prompt sent while claude starts is held by the proxy until
// claude is ready, so a session/cancel then is answered cancelled at once:
// the interrupt goes as soon as the turn's session/send is written
// (client.Begin, not its reply), the proxy withdraws the turn it holds and
// answers the send cancelled (SPEC session/interrupt), and the session
// takes the next prompt as usual.
//
// Cancellation and turns (prompt.go, queue.go). Each Prompt is a
// promptRun in steps: begin (it takes a number, promptQueue.started),
// enqueue (it waits for its turn: promptQueue.takeLocked), resume (the
// session still open: the proxy resumes a suspended one), the send, wait (the turn's end) and end. Each
// Prompt takes a number (session.started).
// session/cancel interrupts the running turn (session/interrupt, sent only
// after the turn's session/send was written, so it cannot overtake it; a
// send the proxy answers cancelled was withdrawn by it: cancelled),
// whose prompt answers cancelled when the turn's result comes, and cancels
// the prompts sent before it that have not begun their turn (cancelTo): they
// answer cancelled without sending anything. A newer valid prompt
// (latest) replaces the running turn: it interrupts it, waits for its end,
// then runs; an older prompt still waiting gives way to it. The SDK's own
// per-prompt context is not used for any of this: it keeps one per session
// and forgets the newer prompt's when an older one returns. A turn ends
// only after the interrupts of it in flight are answered, so a late one
// cannot end the next turn. session/close cancels too: the running and the
// waiting prompts answer cancelled. If the interrupt fails (claude did not
// take it within the proxy's control timeout or closeTimeout), the prompt
// answers cancelled at once: the turn runs on, the session refuses prompts
// (-32600, saying so) until its result comes, and session/cancel tries the
// interrupt again. The SDK runs requests in goroutines but notifications in
// order, so a session/cancel written right after a session/prompt could
// reach the agent first: the guard (Agent.order) counts the session/prompt
// requests the SDK will dispatch (session.received) and holds a
// session/cancel until every one before it has reached Prompt
// (session.started, signalled on session.entered; bounded by closeTimeout,
// after which the counts are put back in step), then sets cancelTo. A
// session/prompt without an id, or a request carrying a result or an
// error, is refused there, since the SDK would run or drop it without an
// answer. A permission prompt the editor answers with an error (or with
// what the SDK cannot read) is denied at once, not left to the proxy's
// permission timeout. AskUserQuestion asks each question in turn.
//
// A resource_link to a file reaches claude as an @-mention of its path
// (percent-escapes decoded; quoted, @"…", when it has spaces, as the CLI
// reads it), which the CLI expands; other URIs as themselves. An embedded
// text resource is wrapped in <context ref=…> (a </context> in its text
// escaped). The session modes offered are default, acceptEdits and plan:
// bypassPermissions is not, since claude takes it only when launched in
// it, which session/new cannot ask for.
//
// # Config options (config.go)
//
// The mode and the model are also ACP select config options (ids "mode"
// and "model"), in the session/new, load and resume answers and in
// set_config_option's: the mode as session/set_mode sets it; the model
// listing the models claude offers (the proxy's session/state models,
// noted with the model from the subscribe reply and each state), present
// once claude has said them. set_config_option of the model is the
// proxy's session/setModel; the proxy keeps the value chosen for a resume
// after a suspend. A session/state that
// changes what the editor was told (configSent) sends a
// config_option_update. A value not offered, an unknown configId or a
// boolean value is -32602 naming it.
//
// # Goroutines and locks
//
// guard reads stdin in its goroutine, owned by Serve: it ends with stdin;
// when Serve ends first (ccproxy went away), Serve gives stdin a read
// deadline in the past (an *os.File on a pipe or terminal) and waits for
// the guard (TestServeJoinsGuard); an input without deadlines is the
// caller's to close, and the guard ends with it. The SDK's
// connection reads that pipe in its goroutine and runs each request
// in a goroutine of its own; it ends when stdin does, and Agent.Serve then
// closes every session this agent created (session/close) and waits for
// its goroutines. the client's read loop (owned by the client.Client, ended by Close or
// the connection's end) is the only reader of the websocket; it calls push
// handlers synchronously, so a session's pushes are handled in order and a
// slow editor slows the read (the proxy lets this client catch up from its
// replay log; nothing is buffered here); a push of a new session waits
// there until the answer naming the session is written (awaitShown: the
// SDK writes an answer already made; bounded by closeTimeout, and by
// Close). Each permission prompt runs in a
// goroutine counted by Agent.wg and cancelled by Agent.ctx (Close) or by
// permission/resolved. lockedWriter.mu serializes the writes to stdout
// and guards the answers awaited (announce.go); a session's show is
// called after it is released. client.Client has its own
// locks (protocol/client/doc.go); Agent.mu guards the session
// table (Close cancels Agent.ctx first, so a session opened after it sees
// that under Agent.mu and is closed at once; a session is taken out of the
// table only if its entry is still that session); session.mu guards the
// session's three parts and its own flags: its promptQueue (queue.go: the
// running turn, whose gaveUp and done channels are closed once, under the
// lock; whether its prompt has answered after a failed interrupt,
// abandoned; the cancelled flag; the received, started, cancelTo and
// latest counts and the wake channel, closed and replaced when they
// change; each turn's ending and unsent flags), its sessionConfig (the
// mode, the model, the models and what the editor was last told,
// configSent), and the closing flag, the pending permission prompts and
// the Claude session id (taken under Agent.mu by evictLocked and
// ListSessions). Lock order: Agent.mu before session.mu, never the other way;
// neither is held across a request to the proxy, and client.Client's
// locks are only taken inside its methods. A session's cwd and ccproxy session id
// are set before it is published and only read after. A Mapper
// is used only by the read loop (a replay's Mapper only by its
// session/load).
//
// Bounds: a client message is at most MaxLineBytes (10 MiB; a longer one
// is drained and answered -32600 with its id, read from its start, and
// logged); a blob fetched for an image block is at most 32 MiB; a websocket
// frame at most 64 MiB (the proxy's own frames are smaller).
package acp

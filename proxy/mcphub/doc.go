// Package mcphub is the proxy's MCP configuration in force and what is
// done with it outside the sessions: the MCP status (SPEC §8) and its
// subscribers, the configuration source of package mcpconfig, the
// requests that change the configuration (mcp/add, mcp/update,
// mcp/remove, mcp/test, mcp/trust, persisted mcp/toggle), the actions on
// live sessions (mcp/toggle, mcp/reconnect) and the OAuth sign-in through
// the CLI (mcp/login, mcp/logout). It does not import package proxy: the
// proxy registers thin adapters in its feature table (proxy/mcpfeatures.go),
// its connections subscribe as a Subscriber and its sessions act as a
// LiveSession.
//
// # Data flow
//
//	config files ─► mcpconfig.Watcher ─► ConfigSource (a Source: Current, Changes; Convert gives
//	  each configuration its Config: mcp_set_servers payload, tool rules, the redacted view,
//	  Spawn's private --mcp-config file, ForClient for a session's client servers)
//	─► the proxy's MCP loop (Changes) ─► Hub.Apply (under applyMu) ─► SetConfig: pushed (mcp/config,
//	  mcp/status to every Subscriber), active (the proxy sends mcp_set_servers to live sessions)
//	sessions' reports (ParseInitServers, ParseMCPStatus) and probe results ─► Hub.Observe,
//	  Hub.ObserveProbes ─► the status: configuration first, then the newest definitive observation,
//	  a session report winning a tie ─► mcp/status to subscribers, GET /v1/mcp/status (StatusBody)
//	a configuration's Config.Known (serve --demo: the recording's mcp_status) ─► observed when
//	  SetConfig installs it, as a session's report
//
// Config.Allows applies the tool rules of a configuration to a permission
// request (the broker's "allowed without asking"). Hub.Scrub masks the
// secrets of the configuration in force and the secret-named environment
// values of ccproxy and claude (EnvSecrets) in text a server or tool
// wrote.
//
// # Managing servers (Manage)
//
// When the Source is also a Manager (ConfigSource is), the proxy offers
// mcp.manage: mcp/add, mcp/update and mcp/remove write the configuration
// files through mcpconfig (locked across processes, atomic), the source
// resolves and installs the result at once, Manage.Apply (the proxy's
// applyMCP) pushes mcp/config and mcp/status, and the reply carries the
// new configuration; live sessions get it through mcp_set_servers as for
// any file edit (the Watcher's event installs the same configuration
// again). Each runs in a goroutine of its connection. mcp/test resolves an
// unsaved definition (Manage.Unsaved, mcpconfig.ResolveUnsaved) which the
// proxy probes like mcp/probe; its result is not an observation.
// mcp/update and mcp/test keep the stored values behind masked
// placeholders (mcpconfig.KeepMasked). mcp/trust records the workspace
// trust with mcpconfig.TrustWorkspace (Manager.Trust), applies the result
// like a file edit and names the servers that became active. mcp/toggle
// with persist records the choice with mcpconfig.SetServerDisabled
// (Manager.SetDisabled) and applies it like a file edit. Error maps
// mcpconfig's write errors to the codes clients see; CheckName refuses
// names that read as options everywhere.
//
// # Live sessions (Live)
//
// mcp/toggle and mcp/reconnect (mcp.live, with any Source) send the CLI's
// mcp_toggle / mcp_reconnect control request to one live session or to
// each at once (Live.Each: a goroutine per session, owned and joined by
// Each, each bounded by Live.Timeout), and ask each session that answered
// for mcp_status afterwards. A live toggle runs in the session
// (LiveSession.ToggleMCP) through the source's ToggleRecorder:
// ConfigSource.UnrecordedToggle holds toggleMu (Watcher events wait)
// while mcpconfig.UnrecordedToggle sends it, waits (up to 5 s) for the
// record that is due and takes back the CLI's record in ~/.claude.json;
// the session keeps the choice (see proxy's doc: MCP in live sessions).
//
// # Signing in to OAuth servers (Logins)
//
// With a Source, on platforms where childproc.OpenTerminal works (Linux),
// the proxy offers mcp.auth: mcp/login runs the CLI's own
// `claude [prefix] mcp login --no-browser -- NAME` (LoginConfig.Command:
// claude's binary, environment without the token, the project as
// directory) so the tokens land where Claude Code keeps them, in
// ~/.claude/.credentials.json, where every claude finds them; a live
// session picks them up on mcp_reconnect. The CLI refuses a stdin that is
// not a terminal, so its stdin is the tty of a pseudo-terminal (the run
// keeps the master open until the CLI is reaped); its stdout is a pipe
// read line by line (lines cut at 16 KiB, terminal escapes removed) for
// the indented authorization URL, its stderr a 16 KiB tail.
//
//	mcp/login ─► checks (no "-" first in the name, configured, http/sse, not only in ccproxy's extra files) ─► claude mcp login --no-browser -- NAME
//	          ─► URL line ─► reply {name, url} + push mcp/login {state: url}
//	          ─► exit 0 ─► mcp_reconnect in every live session (Live.Reconnect) ─► push {state: done}
//	          ─► exit ≠ 0, LoginConfig.Timeout, mcp/logout or a new mcp/login of NAME ─► push {state: failed}
//	mcp/login {name, redirect} ─► must be the running login's redirect_uri (loopback) ─► GET it (no proxy,
//	             no redirects, 30 s) = the CLI's callback ─► reply {name}; the login then ends as above
//	mcp/logout ─► stop NAME's running login, wait for it ─► claude mcp logout (30 s) ─► mcp_reconnect ─► reply
//	Close ─► running logins stopped, new ones refused (shutting_down) ─► wait for every login to end
//	             (CLI reaped, push {state: failed} queued); the proxy closes the connections after it
//
// A login is one run (loginRun: start, wait, finish) in a goroutine of its
// connection (the run func Logins.Login returns) that owns the CLI and one
// goroutine reading its stdout to EOF; whatever stops a login (the
// connection's end, LoginConfig.Timeout, mcp/logout, a new login of the
// name, Close) sends SIGKILL to the CLI's group; the run reaps the CLI
// after that EOF (so the group's leader is never reaped before a signal)
// and returns. One login per server name (a new one stops the old and
// waits for it: the CLI reuses its callback port), at most maxLogins at
// once. The CLI's messages reach clients through scrubCLIText (the
// configuration's secrets masked by Hub.Scrub; user info, query values and
// fragments of URLs masked); the authorization URL itself goes only to the
// client, never to the log, and a redirect (it holds the authorization
// code) is neither logged nor echoed.
//
// # Goroutines
//
// ConfigSource owns one goroutine, forwarding its Watcher's events;
// ConfigSource.Close stops the Watcher, joins it and removes the
// --mcp-config files (each removed once retired and released by every
// process that read it). Live.Each owns one goroutine per target session
// and joins them before it returns. A login's stdout reader is owned by
// its run, which returns only after it. Logins.Close cancels every login
// and waits for their runs to end; it may be called more than once. The
// Hub and Manage run no goroutine.
//
// # Locks
//
// Hub.applyMu serializes Apply (reading the Source's Current and
// installing it), so configurations are installed in the order the source
// made them; Hub.mu is taken under it. Hub.mu guards the configuration in
// force, the observations, the status and the subscribers; a Subscriber's
// Push is called under it (it must only queue). In the proxy's lock order
// Hub.mu comes after Server.mu and beside Session.mu, before the session
// hub's and the client's locks. Hub.secrets is an atomic pointer written
// under Hub.mu and read without it (Scrub takes no lock).
// ConfigSource.toggleMu is held by UnrecordedToggle for one live
// mcp_toggle (taken under a Session.mcpMu) and by the Watcher goroutine
// around an install; ConfigSource.mu is taken under toggleMu; a
// configFile's lock is taken under ConfigSource.mu or alone (and under a
// Session.clientMu). Logins.mu guards the running logins (server name →
// login), their redirect_uri and the closed flag; it is taken alone.
package mcphub

// Package mcpsession is the MCP part of one proxy session: the servers in
// force sent to its claude live (mcp_set_servers; a restart between turns
// when claude refuses, or when a server it was launched with left the
// configuration), the servers toggled off in it alone (mcp_toggle, again
// in each new process), the configuration with the servers its client sent
// (session/create mcpServers: mcphub.Config.ForClient) and the session's
// secret set, with which its tool results are scrubbed. It does not import
// package proxy: a proxy.Session makes its Part with New and is seen by it
// only through the Session interface (control requests, the servers its
// process was launched with, a restart, an mcp_status refresh).
//
// # Data flow
//
//	the proxy's configuration in force (Target.Config) ─► Config: with the client's servers merged
//	  (made again when the proxy's changes) ─► spawn's --mcp-config (the proxy's Session)
//	a configuration change ─► the session's pending-apply slot (proxy: Session.markApply) ─► Apply:
//	  a launched server gone ─► Session.RequestRestart; else mcp_set_servers (less the servers off)
//	  ─► Session.Call; a refusal ─► Session.RequestRestart; then Session.RefreshStatus
//	session/create mcpServers ─► ClientServers: parsed, refused when the proxy takes none
//	mcp/toggle ─► Toggle: mcp_toggle through the recorder, the choice kept in off
//	a new process (restart, resume) ─► ReapplyOff: the servers off disabled again in it
//	claude's user events with tool results ─► ScrubToolResults: the session's Secrets masked
//
// # Goroutines
//
// None of its own: every method runs on its caller's goroutine (the
// session's applier, a restart, a connection's request, claude's stdout
// reader).
//
// # Locks
//
//   - Part.mu serializes Apply and Toggle (ReapplyOff through Toggle) and
//     guards off; it is held across their control request (bounded by
//     Config.ControlTimeout) and taken before the session's lock
//     (Session.Launched and Session.RequestRestart take it under Part.mu).
//     Under it: mcphub.ConfigSource.toggleMu (a recorder's
//     UnrecordedToggle), the client lock.
//   - Part.clientMu guards the client configuration (clientBase, clientCfg,
//     clientStatus, clientRetire, clientDone); it is taken alone, under
//     Part.mu or under the session's lock, and nothing is locked under it
//     but a configuration file's lock (a Config's retire).
//   - The secret set's cache is an atomic pointer; the rest is set by New
//     and never changes.
package mcpsession

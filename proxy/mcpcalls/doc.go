// Package mcpcalls serves mcp/probe, mcp/tools, mcp/call and mcp/log (SPEC
// §3) for package proxy's feature table, runs the probes the proxy makes
// by itself (auto-probes, SPEC §8) and keeps the MCP call log. It does not
// import proxy: the server hands it the MCP status hub behind the small
// Status interface (the configuration to probe, where the results go),
// the scrub of the configuration's secrets, and a prober (package
// mcpconfig/probe) set up with the server's environment and blob store.
//
// Packages probe and calllog return their own types (probe.Result,
// probe.Tool, probe.CallResult, calllog.Entry, ...); wire.go maps them to
// the protocol's, the one place that does (`ccproxy mcp probe|tools|call`
// prints through it too), and turns a *probe.Error into the reply error.
//
// # Data flow
//
//	mcp/probe ─► Status.ProbeTarget ─► Prober.Probe/ProbeAll ─► Status.ObserveProbes
//	   (mcp/status reflects them) ─► MCPProbeResult
//	mcp/tools ─► Prober.Tools ─► MCPToolsResult
//	mcp/call  ─► Prober.Call ─► the call log (scrubbed) ─► MCPCallResult
//	mcp/log   ─► calllog.Last ─► scrubbed again (entries written before a
//	   secret was known) ─► MCPLogResult
//	a session's events ─► SessionCalls.Observe (only events stream marked
//	   MCP) ─► calllog.Pairer ─► the session's and the configuration's scrubs
//	   ─► the call log
//	ConfigChanged ─► the auto-probe loop ─► Status.Unobserved active servers
//	   ─► Prober.Probe each ─► Status.ObserveProbes
//
// # Goroutines
//
// The requests (mcp/test's too, which package proxy runs under the same
// Runner) run through the Runner (package proxy/runner): each in a
// goroutine of its connection, at most Options.MaxRequests at once over
// all connections (limit_exceeded beyond), cancelled when its connection
// ends or at Shutdown (shutting_down). Start starts the auto-probe loop,
// owned by Calls: it ends at Shutdown, and its probes (one goroutine per
// server, joined by the loop) are cancelled then. Close shuts down, waits
// for the requests' replies and for the loop, then closes the call log;
// the server calls Shutdown when it begins to shut down and Close once
// its sessions have ended, before it closes the connections.
//
// # Locks
//
// None of its own. The call log is written by the sessions' stdout loops
// (one SessionCalls each, not safe for concurrent use) and by mcp/call;
// calllog.Log serializes them. Status's methods are called with no lock
// of this package held (the hub takes its own).
package mcpcalls

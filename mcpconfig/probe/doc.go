// Package probe talks to the MCP servers that package mcpconfig resolves,
// with the official MCP Go SDK: it probes them (serverInfo, protocol
// version, capabilities, tools, resources, prompts, the latency of each
// step), turns each tool's inputSchema into a tree of parameters and
// validates arguments against it, and calls tools directly.
//
// # Data flow
//
//	mcpconfig.Config ──► Prober.ProbeAll / Probe ──► []Result   (mcp/probe; §8 observations)
//	                 ──► Prober.Tools            ──► []Tool          (mcp/tools: schema + Parameter tree)
//	                 ──► Prober.ListTools        ──► []ListedTool             (the same, with the schema's notes)
//	                 ──► Prober.Call             ──► CallResult   (mcp/call)
//	                       │ ParseToolSchema(inputSchema).Validate(args) first
//	                       └ result content ──► stream.NormalizeToolResult (same text and attachments as in sessions)
//
// Each listed inputSchema is parsed once (ParseToolSchema): the tree, the
// notes and, for Call, the validation all come from that one parse.
//
// Results are this package's own types (types.go), which package
// proxy/mcpcalls maps to the webview protocol's; failures are *Error values with a stable code
// (COMMAND_NOT_FOUND, SERVER_NOT_FOUND, TIMEOUT, CONNECTION_REFUSED,
// AUTH_REQUIRED, PROCESS_EXITED, PROTOCOL_ERROR, TRANSPORT_UNSUPPORTED,
// NOT_ACTIVE) and a message that never holds a configured secret.
//
// Everything a server wrote that a caller sees — failure messages, stderr
// tails, JSON-RPC error answers, a call's result (content and
// structuredContent, successful or not: a tool may print its own
// environment) — is
// scrubbed by mcpconfig.Secrets: the server's configured values (env and
// header values, URL and argument secrets, expanded ${VAR}s) and the values
// of the secret-looking variables of the servers' environment
// (ProberOptions.Environ) and of ccproxy's own (ANTHROPIC_API_KEY, say).
// A value cut by the start of a truncated stderr tail is masked too.
//
// Servers that are not active (awaiting approval, rejected, disabled) are
// never started. A stdio server runs in its own process group, which is
// killed and awaited before a call returns, so nothing outlives a probe.
//
// A stdio server whose stdout (or stdin) closes is told apart as
// mcp_process_exited or mcp_protocol_error by whether it ended, not by
// which of the two events this process saw first (proc.exitedByItself):
// its exit is awaited for Grace; when it has not been seen by then (on
// Linux the process waited for is the childproc guard, which exits only
// after it reaped the server and ended its descendants: on a loaded
// machine well after the stdout closed), the guard's descendants decide
// (childproc.CommandEnded: none alive, the server ended, and the guard's
// exit with its status is awaited, up to 5 s; one alive, it closed its
// stdout and stays). Without a guard the server is killed at once and its
// status decides: one that had exited keeps its own, one still running
// ends by that SIGKILL. (On Windows the kill is exit code 1, which a
// server exiting with 1 also has; there such a late exit stays a protocol
// error.)
// Nor does the timeout's deadline decide it by when the exit was seen: an
// exit counts as the server's own when the context had not expired when
// the failure came (the server's stdin stays open until the prober stops
// the server: the SDK's close of its transport, which it does as soon as
// the server's stdout ends, does not close it, or a server that closed its
// stdout and would stay would exit on that EOF and look as if it had
// ended by itself), and otherwise only when it was seen before the
// deadline.
//
// It lives apart from package mcpconfig so that config resolution stays
// free of the wire protocol and the normalizer: mcpconfig imports nothing
// of ccproxy's; probe imports mcpconfig and stream, not the wire protocol: it returns
// its own types (types.go), which package proxy/mcpcalls maps to the
// protocol's in one place. The call log
// of MCP tool calls is package mcpconfig/calllog.
//
// A Prober is safe for concurrent use and has no goroutines of its own
// (see Prober).
package probe

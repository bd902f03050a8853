// Package probe talks to the MCP servers that package mcpconfig resolves,
// with the official MCP Go SDK: it probes them (serverInfo, protocol
// version, capabilities, tools, resources, prompts, the latency of each
// step), turns each tool's inputSchema into a tree of parameters and
// validates arguments against it, and calls tools directly.
//
// # Data flow
//
//	mcpconfig.Config ──► Prober.ProbeAll / Probe ──► []protocol.ProbeResult   (mcp/probe; §8 observations)
//	                 ──► Prober.Tools            ──► []protocol.Tool          (mcp/tools: schema + Parameter tree)
//	                 ──► Prober.ListTools        ──► []ListedTool             (the same, with the schema's notes)
//	                 ──► Prober.Call             ──► protocol.MCPCallResult   (mcp/call)
//	                       │ ParseToolSchema(inputSchema).Validate(args) first
//	                       └ result content ──► stream.NormalizeToolResult (same text and attachments as in sessions)
//
// Each listed inputSchema is parsed once (ParseToolSchema): the tree, the
// notes and, for Call, the validation all come from that one parse.
//
// Results have the shapes of the webview protocol, so the proxy forwards
// them as they are; failures are *Error values with a stable code
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
// It lives apart from package mcpconfig so that config resolution stays
// free of the wire protocol and the normalizer: mcpconfig imports nothing
// of ccproxy's; probe imports mcpconfig, stream and protocol. The call log
// of MCP tool calls is package mcpconfig/calllog.
//
// A Prober is safe for concurrent use and has no goroutines of its own
// (see Prober).
package probe

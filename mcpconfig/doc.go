// Package mcpconfig resolves MCP server configuration the way Claude Code
// (2.1.329, measured) does, and safer: it finds every server definition,
// validates it, merges by precedence, expands ${VAR}, applies approval,
// produces what ccproxy passes to claude, redacts what clients see, and
// watches the files for changes. It also parses the text of
// `claude mcp list` and `claude mcp get`.
//
// # How data moves through it
//
//	files ──read, check JSON──▶ definitions ──precedence, approval──▶ Config ──▶ MCPConfigFile (--mcp-config)
//	  ▲      (file:line:col       (validated,      (disabled,          │          AllowedTools (--allowedTools)
//	  │       errors)              ${VAR} expanded, managed)            │          SetServersPayload (mcp_set_servers)
//	  │                            redacted)                            │          Redacted (clients, logs)
//	  └──── Watcher: fsnotify on the folders ◀── Diff(old, new) ◀───────┘
//
// Resolve reads, for a project directory and a home directory:
//
//	scope    file                                              key
//	managed  /etc/claude-code/managed-mcp.json (Options)       mcpServers; when present only these load
//	extra    Options.Extra (ccproxy's --mcp-config)            mcpServers; a later file wins
//	local    ~/.claude.json                                    projects["<dir>"].mcpServers
//	project  <dir>/.mcp.json and the .mcp.json of every parent  mcpServers; the nearest file wins
//	user     ~/.claude.json                                    mcpServers
//
// For one name, extra > local > project > user. "<dir>" is the project
// directory with symlinks resolved, as the CLI keys it. Approval and
// disabling come from ~/.claude/settings.json, <dir>/.claude/settings.json,
// <dir>/.claude/settings.local.json and projects["<dir>"] in ~/.claude.json.
//
// Each definition is validated as the CLI does (stdio with a non-empty
// "command", optional string "args" and "env"; "http" (alias
// "streamable-http"), "sse" and "ws" with a string "url" and optional string
// "headers"; no "type" means stdio; a "url" without "type" is invalid;
// unknown keys are kept). An invalid definition, and a file that is not valid
// JSON, become a FileError with file, line, column and a message that never
// quotes a value; the rest still loads.
//
// ${VAR} and ${VAR:-default} expand in command, args, env values, url and
// header values (see Expand); an undefined variable without default stays
// literal and is listed in Server.MissingEnv. A --mcp-config file is expanded
// by the CLI, but mcp_set_servers is not (measured: a raw "${X}" reaches the
// server verbatim), so ccproxy always sends expanded definitions
// (Server.Expanded): the file and the live update then run the same command.
//
// # Approval (safer than -p)
//
// `claude -p` starts every .mcp.json server of a directory, approved or not.
// ccproxy activates a project server only when the interactive CLI would: it
// is rejected when any settings file lists it in disabledMcpjsonServers; it
// is approved by enableAllProjectMcpServers or enabledMcpjsonServers in
// ~/.claude/settings.json, or in the project's own settings files once the
// workspace is trusted (projects["<dir>"].hasTrustDialogAccepted), or by
// Options.TrustProject; otherwise it awaits approval. An awaiting project
// definition does not block a user definition of the same name (as in the
// CLI). projects["<dir>"].disabledMcpServers disables a server of any scope.
// Approve and Reject record a decision in <dir>/.claude/settings.local.json,
// where the interactive CLI reads it. Config.CLIServers tells what -p itself
// would load, for comparison.
//
// # What the proxy passes to claude
//
// At spawn: MCPConfigFile writes the active servers to a private file (0600;
// Close removes it) and ConfigFile.Args gives --strict-mcp-config
// --mcp-config PATH, so claude loads exactly what ccproxy shows; AllowedTools
// gives the --allowedTools entries. In a live session: when a Watcher event's
// Changes.ActiveChanged is set, send SetServersPayload as the "servers" of an
// mcp_set_servers control request (it replaces all dynamic servers; stdio
// entries always carry "args", which the CLI requires there). To clients and
// logs: Redacted, which masks env and header values (keeping ${VAR} names),
// URL user info, query values and fragments, secret-looking arguments, and
// every string in unknown keys.
//
// On Windows mode bits do not keep other users out of a private file:
// ownerOnly (private_windows.go) gives a file or directory a protected ACL
// with one entry, for the current user (a directory's new files inherit
// it); elsewhere it does nothing.
//
// # Probing
//
// Sub-package probe connects to the resolved servers with the MCP Go SDK
// (probe, tools with parameter trees, direct calls); sub-package calllog
// keeps the log of MCP tool calls. Package mcpconfig itself imports nothing
// of ccproxy's.
//
// # Concurrency
//
// A Config is immutable once returned and may be shared freely. Resolve has
// no shared state and may run concurrently. Approve and Reject serialize
// their read-modify-write of settings.local.json within the process and
// replace the file atomically. A Watcher owns one goroutine; its methods are
// safe for concurrent use and Close is idempotent and waits for the
// goroutine (see Watcher).
package mcpconfig

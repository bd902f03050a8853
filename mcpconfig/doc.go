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
//	  ▲      (file:line:col       (validated,      (disabled,          │          AllowedTools, DisallowedTools (permission rules)
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
// For one name, extra > local > project > user (> client: the servers a
// client sent, see below). "<dir>" is the project
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
// quotes a value (in Config.Errors; a function that fails on a file
// returns it as a *FileError); the rest still loads.
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
// # Servers a client sends
//
// A client may send server definitions with its session (ccproxy's
// session/create "mcpServers", filled by `ccproxy acp` from ACP's
// session/new and session/load). ParseClientServers checks them as a
// file's definitions (the same FileErrors, plus NormalizeDefinition's
// command and url checks, CheckName and no name twice); Config.WithClient
// merges them into a resolved configuration as ScopeClient, the lowest
// rank: on a name clash every file wins and the client's definition is a
// shadow (ClientStatus says so). They come from outside the user's
// settings, like a cloned repository's .mcp.json, so they need approval
// like project servers, and the only approval is Options.TrustClient
// (ccproxy acp --trust-client-mcp): without it they await approval and do
// not start. Their tools are asked like any server's. Their values join
// the Secrets of the configuration and the redacted views like a file's.
// The resolution keeps its definitions and approvals (unexported) so that
// WithClient assembles again without reading any file.
//
// # Permission rules
//
// Config.Permissions gathers permissions.allow, .deny and .ask from every
// settings scope the CLI reads: managed-settings.json (beside
// managed-mcp.json), ~/.claude/settings.json, <dir>/.claude/settings.json and
// <dir>/.claude/settings.local.json (the allow rules of the project's
// settings.json only in a trusted workspace, as the CLI). AllowedTools gives
// the allow rules (and, only with Options.AllowServerTools, "mcp__<name>"
// for every active server: approving a server to start no longer allows its
// tools); DisallowedTools gives the deny rules. AllowRules records an "allow, don't ask again" rule in
// <dir>/.claude/settings.local.json, where the CLI writes its own.
//
// # Settings files
//
// Settings files (not .mcp.json nor ~/.claude.json, which keep JSON.parse's
// last-wins) with a duplicate key anywhere are refused: a FileError names the
// key at its second occurrence, and the file's content is ignored. Every
// write (Approve, Reject, AllowRules, and AddServer/RemoveServer for
// ~/.claude.json and .mcp.json) goes through one read-modify-write
// (updateJSONFile):
// an exclusive lock on the lock file beside the settings file
// (".settings.local.json.lock": privdir.Lock, flock on Unix, LockFileEx on Windows, held
// until the write is done and released if the process dies), read, check
// (an invalid file or a duplicate key: error, file unchanged), edit, write a
// temporary file, rename it over the file.
//
// # Links
//
// A project's files (.mcp.json, .claude/settings*.json) come with a
// repository someone cloned, links included. updateJSONFile, told the
// project directory (fileStyle.within: every write of .mcp.json and of
// .claude/settings.local.json), resolves the links between the project
// directory and the file once (confine, links.go) and refuses the write
// with *LinkError, naming the link and where it resolves, when one of them
// — the file itself or a folder on the way, a dangling one too — resolves
// outside the project: nothing is written, and neither the lock file nor
// the temporary file is created there. Otherwise it works on the resolved
// path only: the lock file is opened with O_NOFOLLOW (a lock file that is
// a link is refused), the temporary file is created exclusively, and the
// rename replaces whatever is at the resolved path instead of following
// it (replaceFile), so a link put there after the check is replaced, not
// written through. Links inside the project are followed. The user's own
// files (~/.claude.json, ~/.claude/settings.json) are followed wherever
// they point (dotfile managers link them). Reading follows links in every
// scope, as the CLI does; a file that is not JSON is reported as "not
// JSON at line L, column C" with encoding/json's reason minus the
// character it quotes, never a byte of the file.
//
// # Server names
//
// CheckName is the rule for a name being defined (AddServer,
// ResolveUnsaved, ParseClientServers): the CLI's, measured on 2.1.329 and
// 2.1.332 (ASCII letters, digits, "-" and "_", any length), and no "-"
// first, which the CLI accepts but which reads as an option on a command
// line. CheckNameRef is the rule for a name that is only referred to
// (RemoveServer, FindServer, Approve, Reject, SetServerDisabled, and the
// proxy's requests naming a configured server): not empty, no "-" first.
// A name a file already holds is read as it is: a server "a.b" loads and
// can be approved or removed; a server "-h" loads too, but every function
// that names it refuses it (rename it in its file).
//
// ~/.claude.json is also written by every claude, under a lock of its own:
// the folder ~/.claude.json.lock (proper-lockfile: mkdir, stale after 10 s
// untouched), inside which it re-reads the file, writes a temporary file
// and renames it over the file (measured on 2.1.329 and 2.1.332,
// docs/CLI-NOTES.md; a first start saves it about seven times, each
// mcp_toggle once). A write of ccproxy's landing between that read and the
// rename was lost. So ccproxy's writes of ~/.claude.json (AddServer and
// RemoveServer in user and local scope, SetServerDisabled, TrustWorkspace,
// UnrecordedToggle's undo) also take that lock (lockCLIConfig, clilock.go),
// inside their own: they wait while a claude holds it (polling every 10 ms,
// up to 30 s, then an error naming the lock folder), take over a stale one
// as proper-lockfile does, and remove it when done.
//
// # Writing server definitions
//
// AddServer and RemoveServer write what `claude mcp add/add-json/remove`
// write, where they write it (user: ~/.claude.json mcpServers; local:
// ~/.claude.json projects["<dir>"].mcpServers, a new project entry with
// the CLI's default keys; project: <dir>/.mcp.json). BuildDefinition makes
// the definition of `mcp add`'s flags, NormalizeDefinition checks a JSON
// definition with the same FileErrors as a file and keeps the keys the CLI
// keeps; ResolveUnsaved resolves an unsaved one for probing. Writes go
// through updateJSONFile, the same locked read-modify-write as settings
// (below), keeping the file's indentation and final newline; the CLI's
// refusals are *ExistsError, *MissingServerError and *ScopesError, bad
// input matches ErrBadInput. An update (ReplaceOnly) resolves the "keep
// unchanged" marker under the file's lock: KeepMasked puts back the stored
// value behind every string still in its redacted form (clients only see
// Redacted definitions), so an edit form need not know the secrets.
// TrustWorkspace records projects["<dir>"].hasTrustDialogAccepted as the
// CLI's trust dialog does; Server.NeedsTrust marks the project servers
// that it would activate.
// UnrecordedToggle is the opposite: the CLI records every live mcp_toggle
// in projects["<dir>"].disabledMcpServers (so every later process starts
// the server disabled); it runs the toggle under the same lock (ccproxy's,
// not the CLI's, which the answering claude takes to save its record) and
// takes that record back under both locks, byte for byte when nothing else
// wrote the file meanwhile, else by putting back only the project's list.
// The claude may answer before its record is in the file: its save may be
// renamed into place after the answer (2.1.329, 2.1.332), and 2.1.332
// saves twice for a toggle, pluginUsage first and the record in a second
// save a few milliseconds later (docs/CLI-NOTES.md). So UnrecordedToggle
// is given the server's name and the state toggled to; when the file from
// before says a record is due (the project's disabledMcpServers does not
// already say so), it waits for that record after the answer, polling the
// file every 10 ms (a read without any lock: the CLI renames), for at most
// toggleRecordWait (5 s), then takes the CLI's lock and undoes it. A record
// that does not come in time is left to that one look under the lock.
//
// # What the proxy passes to claude
//
// At spawn: MCPConfigFile writes the active servers to a private file (0600;
// Close removes it), by default in the process's own 0700 directory
// (PrivateDir: a privdir.Run, <TMPDIR>/ccproxy-<uid>/run-<pid>-*, locked
// while the process lives; RemoveStale, called by every ccproxy serve and
// acp at start, --demo too, removes the directories of processes that are
// gone, even by SIGKILL; ReleasePrivateDir, at a clean shutdown, removes
// the process's own once it holds no file),
// and ConfigFile.Args gives --strict-mcp-config
// --mcp-config PATH, so claude loads exactly what ccproxy shows; AllowedTools
// and DisallowedTools give the --allowedTools and --disallowedTools entries.
// In a live session: when a Watcher event's Changes.ActiveChanged is set, send SetServersPayload as the "servers" of an
// mcp_set_servers control request (it replaces all dynamic servers; stdio
// entries always carry "args", which the CLI requires there). To clients and
// logs: Redacted, which masks env and header values (keeping ${VAR} names),
// URL user info, query values and fragments, secret-looking arguments,
// header values passed as arguments (-H, --header, --headers, --header=V,
// "Authorization: V", "X-Api-Key: V"; the header name stays visible), URL
// path segments and arguments equal to a configured secret, and every
// string in unknown keys.
//
// # Secrets
//
// Secrets is the one mechanism that keeps secret values out of what is
// shown. Server.Secrets holds a definition's configured values (env and
// header values, URL and argument secrets, strings of unknown keys, the
// value of every ${VAR} it uses, as written and expanded); Config.Secrets
// all servers' values; EnvSecrets the values of the variables of an
// environment whose names look secret (KEY, TOKEN, SECRET, PASSWORD,
// CREDENTIAL, AUTH), and ProcessSecrets those of ccproxy's own environment
// and of claude's. MergeSecrets makes one set of several: the proxy's set
// is the configuration's secrets and ProcessSecrets, made again when the
// configuration changes. The redacted views (Redacted, RedactURL,
// RedactArgs, ListEntry.RedactedTarget) mask by position and, given a
// Secrets, by value; Secrets.Scrub masks the values in free text — a
// server's stderr, its error messages, a tool's output — before a client,
// the call log, a file or the log sees it, and ScrubJSON does it to a
// JSON value (an event, a tool's input) keeping it valid JSON.
//
// Scrub reads the text once whatever the number of values (scrub.go: a
// filter of 4-byte grams tested every 5 bytes, patterns found by their
// first 8 bytes, longest first; overlapping values masked as one run); its
// matcher is built at a set's first Scrub, once per set. Values shorter
// than MinSecretLen (8 bytes) are not secrets, and those shorter than
// WordSecretLen (12) are masked only as whole words, so that short
// settings ("true", "prod", "sk-test") do not turn text into asterisks.
//
// On Windows mode bits do not keep other users out of a private file:
// privdir.OwnerOnly gives a file or directory a protected ACL
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
// no shared state and may run concurrently. Approve, Reject, AllowRules,
// AddServer, RemoveServer and UnrecordedToggle (for the whole toggle) serialize their read-modify-write within the process
// (settingsMu, held around the file lock) and across processes (the lock
// file; for ~/.claude.json also the CLI's lock folder, taken last and held
// only around the read-modify-write, so no claude waits on ccproxy for
// longer than that), and replace the file atomically. PrivateDir creates the directory on
// first use (again if it was removed meanwhile) and keeps its lock file open
// while it is in use; a mutex guards that state, and is held while a file
// is created there (createPrivate), so that ReleasePrivateDir never
// removes the directory under a file being made; RemoveStale may run
// concurrently with it and with other processes: a directory whose lock is
// held is never touched. A Watcher owns one goroutine; its methods are
// safe for concurrent use and Close is idempotent and waits for the
// goroutine (see Watcher).
package mcpconfig

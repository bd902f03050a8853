package protocol

import (
	"encoding/json"
	"time"
)

// The data structs below are the source of the JSON Schemas (schema.go):
//   - a field whose json tag has no omitempty/omitzero is required;
//   - only pointer fields tagged schema:"nullable" may be null;
//   - json.RawMessage fields hold client or CLI JSON that is never
//     re-encoded; a schema tag type=object|array says what kind it must be;
//   - `jsonschema:"..."` is the field's description, `schema:"..."` its
//     constraints (see schema.go). Run go generate after changing them.

// Data is implemented by every typed data struct. Validate checks the
// value's JSON encoding against the type's schema and the rules a schema
// cannot state, and returns an *Error with code bad_request that names
// every invalid field.
type Data interface {
	Validate() error
}

// Session states (SessionState.State, SessionInfo.State).
const (
	StateStarting   = "starting"   // process spawned, not ready yet
	StateIdle       = "idle"       // ready for a turn
	StateRunning    = "running"    // a turn is in progress
	StateRestarting = "restarting" // being restarted with --resume (MCP hot reload)
	StateExited     = "exited"     // the process ended; see session/exited
	StateClosed     = "closed"     // closed by session/close; forgotten soon
	StateSuspended  = "suspended"  // idle past the idle timeout: claude stopped; the next turn resumes it (--resume)
)

// Permission modes accepted by session/create and session/setPermissionMode.
const (
	PermissionModeDefault     = "default"
	PermissionModeAcceptEdits = "acceptEdits"
	PermissionModePlan        = "plan"
	PermissionModeBypass      = "bypassPermissions"
)

// Permission behaviors. BehaviorCancelled appears only in permission/resolved.
const (
	BehaviorAllow     = "allow"
	BehaviorDeny      = "deny"
	BehaviorCancelled = "cancelled"
)

// Kinds of permission request (PermissionRequest.Kind).
const (
	PermissionKindTool     = "tool"     // use a tool: allow or deny
	PermissionKindQuestion = "question" // AskUserQuestion: answer the questions (or deny)
	PermissionKindPlan     = "plan"     // ExitPlanMode: approve the plan (allow) or keep planning (deny)
)

// Why a permission request was resolved (PermissionResolved.Reason).
const (
	ResolvedAnswered      = "answered"
	ResolvedTimeout       = "timeout"
	ResolvedCancelled     = "cancelled"
	ResolvedSessionExited = "session_exited"
)

// Why a session's process exited (SessionExited.Reason).
const (
	ExitClosed   = "closed"   // a client sent session/close
	ExitShutdown = "shutdown" // the proxy is stopping
	ExitExited   = "exited"   // the process ended on its own or was killed
)

// Reasons of the session/state closed sent when the proxy forgets an
// exited session by itself: ReasonReaped some time (its session TTL) after
// its exit, ReasonEvicted when a session/create at maxSessions needed its
// room (it had exited longest ago).
const (
	ReasonReaped  = "reaped"
	ReasonEvicted = "evicted"
)

// MCP server statuses (MCPServerStatus.Status).
const (
	MCPConnected        = "connected"
	MCPFailed           = "failed"
	MCPPending          = "pending"
	MCPNeedsAuth        = "needs-auth"
	MCPDisabled         = "disabled"
	MCPAwaitingApproval = "awaiting-approval"
	MCPRejected         = "rejected"
)

// MCP config scopes, as package mcpconfig names them.
const (
	ScopeUser    = "user"
	ScopeLocal   = "local"
	ScopeProject = "project"
	ScopeManaged = "managed"
	ScopeExtra   = "extra"
)

// Approval of an MCP server.
const (
	ApprovalApproved  = "approved"
	ApprovalAwaiting  = "awaiting"
	ApprovalRejected  = "rejected"
	ApprovalNotNeeded = "not-needed"
)

// Where an MCP status entry's status came from (MCPServerStatus.Origin).
const (
	OriginConfig  = "config"
	OriginSession = "session"
	OriginProbe   = "probe"
)

// Kinds of mcp/log entries.
const (
	LogKindSession = "session" // a tool_use/tool_result pair seen in a session
	LogKindDirect  = "direct"  // an mcp/call
)

// ---------------------------------------------------------------- hello

// Hello is the data of the first frame the proxy sends on a connection.
type Hello struct {
	Protocol     string    `json:"protocol" schema:"const=1"`
	Server       Software  `json:"server"`
	Claude       *Software `json:"claude,omitempty" jsonschema:"The Claude Code CLI the proxy runs, when found (name claude-code); with serve --demo or --replay, ccproxy's replay of a recorded session (name ccproxy-replay, version: the recording CLI's)."`
	Capabilities []string  `json:"capabilities" schema:"uniqueItems,items.minLength=1"`
	Limits       Limits    `json:"limits"`
	Connection   string    `json:"connection,omitempty" jsonschema:"An id for this connection, for logs."`
}

// Software names a program and its version.
type Software struct {
	Name    string `json:"name" schema:"minLength=1"`
	Version string `json:"version" schema:"minLength=1"`
}

// Limits are the bounds a connection lives within.
type Limits struct {
	MaxFrameBytes       int64 `json:"maxFrameBytes" schema:"minimum=1"`
	SendQueueFrames     int64 `json:"sendQueueFrames" schema:"minimum=1"`
	ReplayBytes         int64 `json:"replayBytes" schema:"minimum=1"`
	MaxSessions         int64 `json:"maxSessions,omitempty" schema:"minimum=0"`
	MaxImageBytes       int64 `json:"maxImageBytes,omitempty" schema:"minimum=0"`
	PermissionTimeoutMs int64 `json:"permissionTimeoutMs,omitempty" schema:"minimum=0"`
}

// ---------------------------------------------------------------- requests

// SessionCreate is the data of session/create.
type SessionCreate struct {
	Cwd            string `json:"cwd,omitempty" jsonschema:"Absolute working directory; default: the proxy's --project directory." schema:"ref=Cwd"`
	Model          string `json:"model,omitempty" schema:"ref=Model"`
	PermissionMode string `json:"permissionMode,omitempty" schema:"ref=PermissionMode"`
	Resume         string `json:"resume,omitempty" jsonschema:"Resume this Claude session (claude --resume)." schema:"ref=ClaudeSessionId"`
	// Fork continues Resume's conversation as a new Claude session (claude
	// --resume ID --fork-session): the stored or live original is left as
	// it was. Only with Resume.
	Fork bool `json:"fork,omitempty" jsonschema:"With resume: continue that conversation as a new Claude session (claude --fork-session), leaving the original as it was."`
	// MCPServers are MCP servers the client adds to this session: an
	// object of definitions by name, the shape of a .mcp.json's
	// "mcpServers" (SPEC §3 session/create). It may hold secrets. Its
	// schema is in schemaRules (rules.go).
	MCPServers json.RawMessage `json:"mcpServers,omitempty" jsonschema:"MCP servers the client adds to this session, by name: definitions shaped as in .mcp.json (stdio: command, args?, env?; http/sse/ws: type, url, headers?). Checked and merged like a config file's, below every file; started only if the proxy trusts client servers (--trust-client-mcp). May hold secrets."`
}

// MaxClientMCPServers bounds SessionCreate.MCPServers.
const MaxClientMCPServers = 64

// SessionCreateResult is the data of the reply to session/create.
type SessionCreateResult struct {
	Session string `json:"session" schema:"ref=SessionId"`
	State   string `json:"state,omitempty" schema:"ref=SessionState"`
	Cwd     string `json:"cwd,omitempty"`
	// MCPServers says what became of each server of SessionCreate.MCPServers.
	MCPServers []ClientMCPServer `json:"mcpServers,omitzero" jsonschema:"What became of each server of the request's mcpServers."`
}

// ClientMCPServer is what became of one MCP server a client sent with
// session/create: active (given to claude) or not, and why not.
type ClientMCPServer struct {
	Name     string `json:"name" schema:"minLength=1,maxLength=256"`
	Active   bool   `json:"active" jsonschema:"Given to claude."`
	Approval string `json:"approval" schema:"ref=Approval"`
	Reason   string `json:"reason,omitempty" jsonschema:"Why an inactive server is inactive."`
}

// SessionSend is the data of session/send: one user turn.
type SessionSend struct {
	Session string  `json:"session" schema:"ref=SessionId"`
	Text    string  `json:"text" jsonschema:"The user's text; may be empty only when images are sent."`
	Images  []Image `json:"images,omitzero"`
}

// Image is an image sent with a user turn, base64-encoded.
type Image struct {
	MediaType string `json:"mediaType" schema:"ref=ImageMediaType"`
	Data      string `json:"data" jsonschema:"The image bytes, base64." schema:"ref=Base64,minLength=1"`
}

// SessionSubscribe is the data of session/subscribe.
type SessionSubscribe struct {
	Session  string `json:"session" schema:"ref=SessionId"`
	AfterSeq *int64 `json:"afterSeq,omitempty" jsonschema:"Last seq the client has; 0 or absent replays everything the log holds." schema:"minimum=0"`
}

// SessionSubscribeResult is the data of the reply to session/subscribe.
type SessionSubscribeResult struct {
	Session  string        `json:"session" schema:"ref=SessionId"`
	State    string        `json:"state" schema:"ref=SessionState"`
	FirstSeq int64         `json:"firstSeq" jsonschema:"Oldest seq the log holds (lastSeq+1 when it is empty)." schema:"minimum=1"`
	LastSeq  int64         `json:"lastSeq" jsonschema:"Newest seq assigned so far (0 when none)." schema:"minimum=0"`
	Model    string        `json:"model,omitempty" jsonschema:"The model the session runs now (as in session/state)." schema:"ref=ModelValue"`
	Models   []ModelInfo   `json:"models,omitempty" jsonschema:"The models claude offers (as in session/state), at most 64." schema:"maxItems=MaxModels"`
	Usage    *SessionUsage `json:"usage,omitempty" jsonschema:"What the session's turns used (as in session/state)."`
	Title    string        `json:"title,omitempty" jsonschema:"The session's title, once renamed (as in session/state)." schema:"ref=SessionTitle"`
}

// SessionUnsubscribe is the data of session/unsubscribe.
type SessionUnsubscribe struct {
	Session string `json:"session" schema:"ref=SessionId"`
}

// SessionInterrupt is the data of session/interrupt.
type SessionInterrupt struct {
	Session string `json:"session" schema:"ref=SessionId"`
}

// SessionClose is the data of session/close.
type SessionClose struct {
	Session string `json:"session" schema:"ref=SessionId"`
}

// SessionList is the (empty) data of session/list.
type SessionList struct{}

// SessionListResult is the data of the reply to session/list.
type SessionListResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo describes one session in session/list.
type SessionInfo struct {
	Session            string    `json:"session" schema:"ref=SessionId"`
	State              string    `json:"state" schema:"ref=SessionState"`
	Cwd                string    `json:"cwd" schema:"minLength=1"`
	Model              string    `json:"model,omitempty" jsonschema:"The model the session runs, as session/state reports it."`
	PermissionMode     string    `json:"permissionMode,omitempty" schema:"ref=PermissionMode"`
	ClaudeSessionID    string    `json:"claudeSessionId,omitempty"`
	CreatedAt          time.Time `json:"createdAt" schema:"ref=Timestamp"`
	FirstSeq           int64     `json:"firstSeq" schema:"minimum=1"`
	LastSeq            int64     `json:"lastSeq" schema:"minimum=0"`
	Subscribers        int64     `json:"subscribers" schema:"minimum=0"`
	PendingPermissions int64     `json:"pendingPermissions" schema:"minimum=0"`
	Title              string    `json:"title,omitempty" jsonschema:"The session's title, once renamed with history/rename (as in session/state)." schema:"ref=SessionTitle"`
}

// PermissionRespond is the data of permission/respond. Always (with allow,
// for a tool) also allows the tool from now on: the rule is written to the
// project's .claude/settings.local.json. Answers (with allow, for a
// question) maps each question's text to the chosen option's label (labels
// joined with ", " for a multiSelect question) or to free text.
type PermissionRespond struct {
	Session      string            `json:"session" schema:"ref=SessionId"`
	RequestID    string            `json:"requestId" schema:"minLength=1"`
	Behavior     string            `json:"behavior" schema:"ref=RespondBehavior"`
	UpdatedInput json.RawMessage   `json:"updatedInput,omitempty" jsonschema:"With allow: the input the tool runs with; default: the requested input." schema:"type=object"`
	Message      string            `json:"message,omitempty" jsonschema:"With deny: the reason Claude sees; default: \"Denied by the user\"."`
	Always       bool              `json:"always,omitempty" jsonschema:"With allow, for a tool: allow it from now on, without asking (the suggested rules are written to permissions.allow of .claude/settings.local.json in the session's directory, and applied to the session)."`
	Answers      map[string]string `json:"answers,omitempty" jsonschema:"With allow, for a question: each question's text -> the chosen option's label (labels joined with \", \" for multiSelect) or free text." schema:"keys.minLength=1"`
}

// SessionSetPermissionMode is the data of session/setPermissionMode.
type SessionSetPermissionMode struct {
	Session string `json:"session" schema:"ref=SessionId"`
	Mode    string `json:"mode" schema:"ref=PermissionMode"`
}

// SessionSetPermissionModeResult is the data of the reply to
// session/setPermissionMode: the mode now in force.
type SessionSetPermissionModeResult struct {
	Mode string `json:"mode" schema:"ref=PermissionMode"`
}

// SessionSetModel is the data of session/setModel. Model is one of the
// values session/state's models lists, or any name claude takes (claude
// accepts names it does not know: the next turn's API call fails then).
type SessionSetModel struct {
	Session string `json:"session" schema:"ref=SessionId"`
	Model   string `json:"model" schema:"ref=ModelValue"`
}

// SessionSetModelResult is the data of the reply to session/setModel.
type SessionSetModelResult struct {
	Model         string `json:"model" jsonschema:"The model now in force: the value sent." schema:"ref=ModelValue"`
	ResolvedModel string `json:"resolvedModel,omitempty" jsonschema:"The model id claude resolved it to (e.g. claude-sonnet-5-5 for sonnet), as claude answered; what the next system/init reports." schema:"maxLength=MaxModelBytes"`
}

// Bounds of the models a session reports (SessionState.Models): claude's
// list is cut to MaxModels entries, and each string to its bound (in
// bytes, at a rune boundary). A model value is at most MaxModelBytes.
const (
	MaxModels                = 64
	MaxModelBytes            = 256
	MaxModelDisplayNameBytes = 256
	MaxModelDescriptionBytes = 1024
)

// ModelInfo is one model claude offers (its initialize reply's models).
type ModelInfo struct {
	Value       string `json:"value" jsonschema:"What session/setModel takes (an alias such as sonnet, or default)." schema:"ref=ModelValue"`
	DisplayName string `json:"displayName,omitempty" jsonschema:"A short name to show." schema:"maxLength=MaxModelDisplayNameBytes"`
	Description string `json:"description,omitempty" jsonschema:"One line about the model (version, use, price)." schema:"maxLength=MaxModelDescriptionBytes"`
}

// MCPSubscribe is the (empty) data of mcp/subscribe.
type MCPSubscribe struct{}

// MCPUnsubscribe is the (empty) data of mcp/unsubscribe.
type MCPUnsubscribe struct{}

// MCPApprove is the data of mcp/approve.
type MCPApprove struct {
	Name string `json:"name" schema:"ref=ServerName"`
}

// MCPReject is the data of mcp/reject.
type MCPReject struct {
	Name string `json:"name" schema:"ref=ServerName"`
}

// MCPApprovalResult is the data of the reply to mcp/approve and mcp/reject.
type MCPApprovalResult struct {
	Name     string `json:"name" schema:"ref=ServerName"`
	Approval string `json:"approval" schema:"ref=Approval"`
}

// MCPAdd is the data of mcp/add: write a server definition, as
// `claude mcp add-json` does, into a scope's file. Definition is the JSON
// object a configuration file holds under mcpServers.NAME.
type MCPAdd struct {
	Name       string          `json:"name" schema:"ref=ServerName"`
	Scope      string          `json:"scope,omitempty" jsonschema:"The scope written: local (~/.claude.json projects[dir]), project (<dir>/.mcp.json), user (~/.claude.json)." schema:"ref=WriteScope"` // MCPWriteScopes; default local
	Definition json.RawMessage `json:"definition" jsonschema:"A server definition as a configuration file holds it under mcpServers.NAME; checked as in a file." schema:"type=object"`
}

// MCPUpdate is the data of mcp/update: replace the definition of a server
// that exists in the scope.
type MCPUpdate struct {
	Name       string          `json:"name" schema:"ref=ServerName"`
	Scope      string          `json:"scope,omitempty" jsonschema:"The scope written: local (~/.claude.json projects[dir]), project (<dir>/.mcp.json), user (~/.claude.json)." schema:"ref=WriteScope"`
	Definition json.RawMessage `json:"definition" jsonschema:"A server definition as a configuration file holds it under mcpServers.NAME; checked as in a file." schema:"type=object"`
}

// MCPRemove is the data of mcp/remove; no scope: the one scope that has it.
type MCPRemove struct {
	Name  string `json:"name" schema:"ref=ServerName"`
	Scope string `json:"scope,omitempty" jsonschema:"The scope written: local (~/.claude.json projects[dir]), project (<dir>/.mcp.json), user (~/.claude.json)." schema:"ref=WriteScope"`
}

// MCPManageResult is the data of the reply to mcp/add, mcp/update and
// mcp/remove: where the change was written and the configuration resolved
// afterwards (what mcp/config now pushes).
type MCPManageResult struct {
	Name   string    `json:"name" schema:"ref=ServerName"`
	Scope  string    `json:"scope" jsonschema:"The scope written: local (~/.claude.json projects[dir]), project (<dir>/.mcp.json), user (~/.claude.json)." schema:"ref=WriteScope"`
	File   string    `json:"file" schema:"minLength=1"`
	Config MCPConfig `json:"config"`
}

// MCPTrust is the (empty) data of mcp/trust: record that the user trusts
// the proxy's project directory, as the CLI records an accepted trust
// dialog (projects["<dir>"].hasTrustDialogAccepted in ~/.claude.json).
type MCPTrust struct{}

// MCPTrustResult is the data of the reply to mcp/trust: where trust was
// recorded, the servers it made active, and the configuration resolved
// afterwards.
type MCPTrustResult struct {
	Project string    `json:"project" schema:"minLength=1"`
	File    string    `json:"file" schema:"minLength=1"`
	Enabled []string  `json:"enabled" jsonschema:"The servers active now that were not before." schema:"items.minLength=1"`
	Config  MCPConfig `json:"config"`
}

// MCPTest is the data of mcp/test: probe a definition that is not saved.
// Its reply is an MCPProbeResult with one result.
type MCPTest struct {
	Name       string          `json:"name,omitempty" schema:"ref=ServerName"` // default "test"
	Definition json.RawMessage `json:"definition" jsonschema:"A server definition as a configuration file holds it under mcpServers.NAME; checked as in a file." schema:"type=object"`
}

// MCPToggle is the data of mcp/toggle: enable or disable a server in one
// live session or (no session) in every live session, through the CLI's
// mcp_toggle control request. Enabled is required. With Persist the
// choice is instead recorded where the CLI records disabled servers
// (projects["<dir>"].disabledMcpServers of ~/.claude.json) and reaches every
// live session through the configuration, like a file edit (Sessions is
// then empty; Session must not be set).
type MCPToggle struct {
	Name    string `json:"name" schema:"ref=ServerName"`
	Enabled *bool  `json:"enabled"`
	Session string `json:"session,omitempty" schema:"ref=SessionId"`
	Persist bool   `json:"persist,omitempty" jsonschema:"Record it in ~/.claude.json projects[dir].disabledMcpServers instead; applies to every session through the configuration."`
}

// MCPReconnect is the data of mcp/reconnect: reconnect a server in one
// live session or in every live session (mcp_reconnect).
type MCPReconnect struct {
	Name    string `json:"name" schema:"ref=ServerName"`
	Session string `json:"session,omitempty" schema:"ref=SessionId"`
}

// MCPLiveResult is the data of the reply to mcp/toggle and mcp/reconnect:
// what each live session concerned answered.
type MCPLiveResult struct {
	Name     string           `json:"name" schema:"ref=ServerName"`
	Sessions []MCPLiveOutcome `json:"sessions"`
}

// MCPLiveOutcome is one session's answer: ok, or the error (cli_error
// with claude's message, timeout, session_exited).
type MCPLiveOutcome struct {
	Session string `json:"session" schema:"ref=SessionId"`
	OK      bool   `json:"ok"`
	Error   *Error `json:"error,omitempty"`
}

// MCPLogin is the data of mcp/login: sign in to an OAuth-protected server
// (type http or sse, in Claude Code's own configuration) with the CLI's
// `claude mcp login`, so the tokens land where Claude Code keeps them. The
// reply carries the authorization URL to open; one mcp/login push with
// state done or failed follows it. With Redirect it instead completes the
// running login of Name with the address the browser was sent back to
// (when the browser runs on another machine than ccproxy, its redirect to
// the CLI's loopback callback fails there: the user copies that address):
// ccproxy delivers it to the CLI's callback, and the reply is {name}.
type MCPLogin struct {
	Name     string `json:"name" schema:"ref=ServerName"`
	Redirect string `json:"redirect,omitempty" jsonschema:"Complete the running login of name with the address the browser was sent back to (the CLI's loopback callback with code and state)." schema:"pattern=^https?://[^/?#]+"`
}

// MCPLoginResult is the data of the reply to mcp/login: the authorization
// URL the CLI printed. Open it in a browser on the machine where ccproxy
// runs: the authorization server redirects to the CLI's callback on a
// loopback port there. URL is empty only when the CLI finished without
// printing one (its mcp/login push then follows at once).
type MCPLoginResult struct {
	Name string `json:"name" schema:"ref=ServerName"`
	URL  string `json:"url,omitempty" jsonschema:"The authorization URL; absent only when the CLI finished without printing one." schema:"pattern=^https?://[^/?#]+"`
}

// MCPLogout is the data of mcp/logout: clear the server's stored OAuth
// credentials with `claude mcp logout` (cancelling a login of it that is
// still running), then reconnect it in every live session.
type MCPLogout struct {
	Name string `json:"name" schema:"ref=ServerName"`
}

// MCPLogoutResult is the data of the reply to mcp/logout: the CLI's
// message and what each live session answered to the reconnect (an
// error "Server status: needs-auth" is the expected answer).
type MCPLogoutResult struct {
	Name     string           `json:"name" schema:"ref=ServerName"`
	Message  string           `json:"message,omitempty" jsonschema:"The CLI's message."`
	Sessions []MCPLiveOutcome `json:"sessions"`
}

// MCPLoginEvent is the data of the mcp/login push, sent to the client that
// asked: state url (the URL is known, as in the reply), then done (signed
// in; live sessions were reconnected) or failed (Error: cli_error with the
// CLI's message, timeout, or cancelled).
type MCPLoginEvent struct {
	Name    string `json:"name" schema:"ref=ServerName"`
	State   string `json:"state" jsonschema:"url, then done or failed."`
	URL     string `json:"url,omitempty" jsonschema:"An absolute http(s) URL." schema:"pattern=^https?://[^/?#]+"`
	Message string `json:"message,omitempty" jsonschema:"The CLI's message on success."`
	Error   *Error `json:"error,omitempty"`
}

// States of an mcp/login push.
const (
	LoginURL    = "url"
	LoginDone   = "done"
	LoginFailed = "failed"
)

// LoginStates are the states of an mcp/login push.
var LoginStates = []string{LoginURL, LoginDone, LoginFailed}

// MCPWriteScopes are the scopes mcp/add, mcp/update and mcp/remove write.
var MCPWriteScopes = []string{"local", "project", "user"}

// MCPProbe is the data of mcp/probe; no name probes every configured server.
type MCPProbe struct {
	Name string `json:"name,omitempty" schema:"ref=ServerName"`
}

// MCPProbeResult is the data of the reply to mcp/probe.
type MCPProbeResult struct {
	Results []ProbeResult `json:"results"`
}

// ProbeResult is what probing one server found.
type ProbeResult struct {
	Name            string            `json:"name" schema:"ref=ServerName"`
	Scope           string            `json:"scope,omitempty" schema:"ref=Scope"`
	Transport       string            `json:"transport,omitempty" schema:"ref=Transport"`
	OK              bool              `json:"ok" jsonschema:"true exactly when status is connected."`
	Status          string            `json:"status" schema:"ref=ProbeStatus"`
	Error           *ProbeError       `json:"error,omitempty"`
	ServerInfo      *MCPServerInfo    `json:"serverInfo,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Capabilities    json.RawMessage   `json:"capabilities,omitempty" schema:"type=object"`
	Tools           []ToolSummary     `json:"tools,omitzero"`
	ToolCount       int64             `json:"toolCount" schema:"minimum=0"`
	Resources       []ResourceSummary `json:"resources,omitzero"`
	Prompts         []PromptSummary   `json:"prompts,omitzero"`
	LatencyMs       Latency           `json:"latencyMs" jsonschema:"Milliseconds per probe step."`
	ProbedAt        time.Time         `json:"probedAt,omitzero" schema:"ref=Timestamp"`
}

// ProbeError is a typed probe failure; Code is one of the Probe* constants.
type ProbeError struct {
	Code       string `json:"code" schema:"ref=ProbeCode"`
	Message    string `json:"message" schema:"minLength=1"`
	StderrTail string `json:"stderrTail,omitempty"`
}

// MCPServerInfo is the serverInfo an MCP server returned from initialize.
type MCPServerInfo struct {
	Name    string `json:"name" schema:"minLength=1"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Latency of each probe step, in milliseconds.
type Latency struct {
	Total      float64  `json:"total" schema:"minimum=0"`
	Connect    *float64 `json:"connect,omitempty" schema:"minimum=0"`
	Initialize *float64 `json:"initialize,omitempty" schema:"minimum=0"`
	Tools      *float64 `json:"tools,omitempty" schema:"minimum=0"`
	Resources  *float64 `json:"resources,omitempty" schema:"minimum=0"`
	Prompts    *float64 `json:"prompts,omitempty" schema:"minimum=0"`
}

// ToolSummary names a tool.
type ToolSummary struct {
	Name        string `json:"name" schema:"minLength=1"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// ResourceSummary names a resource.
type ResourceSummary struct {
	URI         string `json:"uri" schema:"minLength=1"`
	Name        string `json:"name"`
	MimeType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// PromptSummary names a prompt.
type PromptSummary struct {
	Name        string `json:"name" schema:"minLength=1"`
	Description string `json:"description,omitempty"`
}

// MCPTools is the data of mcp/tools.
type MCPTools struct {
	Name string `json:"name" schema:"ref=ServerName"`
}

// MCPToolsResult is the data of the reply to mcp/tools.
type MCPToolsResult struct {
	Server string `json:"server" schema:"ref=ServerName"`
	Tools  []Tool `json:"tools"`
}

// Tool is one tool of a server with its parameters.
type Tool struct {
	Name         string          `json:"name" schema:"minLength=1"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema" schema:"type=object"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty" schema:"type=object"`
	Annotations  json.RawMessage `json:"annotations,omitempty" schema:"type=object"`
	Parameters   []Parameter     `json:"parameters"`
}

// Parameter is one node of the parameter tree built from a tool's inputSchema.
// Type is string, number, integer, boolean, object, array, null or any.
type Parameter struct {
	Name        string            `json:"name" jsonschema:"Property name; empty for array items and union variants."`
	Path        string            `json:"path" jsonschema:"Where in the arguments: filters[].key (\"[]\" for array items)." schema:"minLength=1"`
	Type        string            `json:"type" schema:"ref=ParameterType"`
	Description string            `json:"description,omitempty"`
	Required    bool              `json:"required"`
	Nullable    bool              `json:"nullable,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty" jsonschema:"Any JSON value."`
	Enum        []json.RawMessage `json:"enum,omitzero"`
	Minimum     *float64          `json:"minimum,omitempty"`
	Maximum     *float64          `json:"maximum,omitempty"`
	MinLength   *int64            `json:"minLength,omitempty" schema:"minimum=0"`
	MaxLength   *int64            `json:"maxLength,omitempty" schema:"minimum=0"`
	Pattern     string            `json:"pattern,omitempty"`
	Format      string            `json:"format,omitempty"`
	Items       *Parameter        `json:"items,omitempty"`
	Properties  []Parameter       `json:"properties,omitzero"`
	AnyOf       []Parameter       `json:"anyOf,omitzero"`
	OneOf       []Parameter       `json:"oneOf,omitzero"`
	Unsupported string            `json:"unsupported,omitempty" jsonschema:"What of the schema could not be represented (for example a $ref cycle)."`
}

// MCPCall is the data of mcp/call.
type MCPCall struct {
	Name      string          `json:"name" schema:"ref=ServerName"`
	Tool      string          `json:"tool" schema:"minLength=1,maxLength=maxNameBytes"`
	Arguments json.RawMessage `json:"arguments" schema:"type=object"`
}

// MCPCallResult is the data of the reply to mcp/call: the tool's result,
// normalized like session tool_results.
type MCPCallResult struct {
	Server            string          `json:"server" schema:"ref=ServerName"`
	Tool              string          `json:"tool" schema:"minLength=1"`
	IsError           bool            `json:"isError" jsonschema:"The tool reported an error (a result, not a failed request)."`
	Content           string          `json:"content" jsonschema:"The result as text, normalized like session tool_results."`
	Attachments       []Attachment    `json:"attachments,omitzero"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty" jsonschema:"The tool's structuredContent, verbatim."`
	DurationMs        float64         `json:"durationMs" schema:"minimum=0"`
}

// Attachment is binary content taken out of a tool result by normalization
// (package stream). Data (base64, inline mode) or URL (/v1/blobs/<sha256>)
// says where its bytes are; Error says why neither is set.
type Attachment struct {
	Kind      string `json:"kind" jsonschema:"The content block type it came from: image, audio, resource (an embedded blob), document, or another block type; render an unknown kind as a download." schema:"ref=AttachmentKind"`
	MediaType string `json:"mediaType,omitempty" jsonschema:"MIME type, e.g. image/png; absent when unknown." schema:"minLength=1"`
	Size      int64  `json:"size" jsonschema:"Size of the decoded bytes." schema:"minimum=0"`
	SHA256    string `json:"sha256" schema:"ref=Sha256"`
	URI       string `json:"uri,omitempty" jsonschema:"The resource URI of an embedded resource."`
	URL       string `json:"url,omitempty" jsonschema:"Where the proxy serves the bytes: /v1/blobs/<sha256>, relative to the proxy's base URL." schema:"minLength=1"`
	Data      string `json:"data,omitempty" jsonschema:"The bytes, base64, when attachments are inlined." schema:"ref=Base64"`
	Error     string `json:"error,omitempty" jsonschema:"Why the data could not be decoded or stored; then neither url nor data is set."`
}

// MCPLog is the data of mcp/log.
type MCPLog struct {
	Server string `json:"server,omitempty" schema:"ref=ServerName"`
	Limit  *int64 `json:"limit,omitempty" jsonschema:"Default 100." schema:"minimum=1,maximum=MaxLogLimit"`
}

// MCPLogResult is the data of the reply to mcp/log: oldest entry first.
type MCPLogResult struct {
	Entries []LogEntry `json:"entries"`
}

// LogEntry is one MCP tool call.
type LogEntry struct {
	Time        time.Time       `json:"time" schema:"ref=Timestamp"`
	Kind        string          `json:"kind" schema:"ref=LogKind"`
	Session     string          `json:"session,omitempty" schema:"ref=SessionId"`
	Server      string          `json:"server" schema:"ref=ServerName"`
	Tool        string          `json:"tool" schema:"minLength=1,maxLength=maxNameBytes"`
	ToolUseID   string          `json:"toolUseId,omitempty"`
	IsError     bool            `json:"isError"`
	DurationMs  *float64        `json:"durationMs,omitempty" schema:"minimum=0"`
	ResultBytes int64           `json:"resultBytes" schema:"minimum=0"`
	Input       json.RawMessage `json:"input,omitempty" jsonschema:"The arguments, only when input logging is enabled."`
	Output      *string         `json:"output,omitempty" jsonschema:"The normalized result text, only when output logging is enabled."`
}

// Empty is the data of replies that carry nothing: {}.
type Empty struct{}

// ---------------------------------------------------------------- pushes

// SessionEvent is the data of session/event. Event is the normalized
// stream-json event exactly as package stream produced it.
type SessionEvent struct {
	Session string          `json:"session" schema:"ref=SessionId"`
	Seq     int64           `json:"seq" schema:"ref=Seq"`
	Event   json.RawMessage `json:"event" schema:"ref=NormalizedEvent"`
}

// SessionState is the data of session/state.
type SessionState struct {
	Session         string        `json:"session" schema:"ref=SessionId"`
	State           string        `json:"state" schema:"ref=SessionState"`
	ClaudeSessionID string        `json:"claudeSessionId,omitempty"`
	Reason          string        `json:"reason,omitempty"`
	PermissionMode  string        `json:"permissionMode,omitempty" jsonschema:"The session's permission mode, as claude last reported it." schema:"ref=PermissionMode"`
	Model           string        `json:"model,omitempty" jsonschema:"The model the session runs: the value last set by session/setModel (or session/create), else the model id claude's system/init reports." schema:"ref=ModelValue"`
	Models          []ModelInfo   `json:"models,omitempty" jsonschema:"The models claude offers (its initialize reply), at most 64." schema:"maxItems=MaxModels"`
	Usage           *SessionUsage `json:"usage,omitempty" jsonschema:"What the session's turns used, once a turn ended (SPEC session/state)."`
	Title           string        `json:"title,omitempty" jsonschema:"The session's title, once renamed with history/rename while it runs (claude stores it as the CLI's own rename does)." schema:"ref=SessionTitle"`
}

// SessionExited is the data of session/exited. Code is null when the
// process was killed by a signal; Signal is null when it exited by itself.
type SessionExited struct {
	Session    string  `json:"session" schema:"ref=SessionId"`
	Code       *int64  `json:"code" jsonschema:"Exit code; null when killed by a signal." schema:"nullable"`
	Signal     *string `json:"signal" jsonschema:"Signal name such as SIGKILL; null when it exited by itself." schema:"minLength=1,nullable"`
	StderrTail string  `json:"stderrTail" jsonschema:"The end of claude's stderr (bounded)."`
	Reason     string  `json:"reason,omitempty" schema:"ref=ExitReason"`
}

// SessionGap is the data of session/gap: events before FirstSeq are gone.
type SessionGap struct {
	Session  string `json:"session" schema:"ref=SessionId"`
	FirstSeq int64  `json:"firstSeq" schema:"ref=Seq"`
}

// PermissionRequest is the data of permission/request. Kind says what is
// asked: a tool use (PermissionKindTool; empty means the same), the
// questions of AskUserQuestion (PermissionKindQuestion, Questions set), or
// the approval of a plan (PermissionKindPlan, Plan set when claude gave its
// text). Questions and plans have no Deadline: they wait for a person.
type PermissionRequest struct {
	Session     string          `json:"session" schema:"ref=SessionId"`
	RequestID   string          `json:"requestId" schema:"minLength=1"`
	Kind        string          `json:"kind,omitempty" jsonschema:"tool (default): allow or deny a tool use; question: AskUserQuestion, answer with answers; plan: ExitPlanMode, allow approves the plan, deny keeps planning." schema:"ref=PermissionKind"`
	ToolName    string          `json:"toolName" schema:"minLength=1"`
	Input       json.RawMessage `json:"input" schema:"type=object"`
	MCP         *MCPRef         `json:"mcp,omitempty"`
	ToolUseID   string          `json:"toolUseId,omitempty"`
	DisplayName string          `json:"displayName,omitempty"`
	Suggestions json.RawMessage `json:"suggestions,omitempty" jsonschema:"The CLI's permission_suggestions, verbatim." schema:"type=array"`
	Questions   []Question      `json:"questions,omitempty" jsonschema:"kind question: the questions to answer."`
	Plan        string          `json:"plan,omitempty" jsonschema:"kind plan: the plan's text, when claude gave it."`
	Deadline    time.Time       `json:"deadline,omitzero" jsonschema:"When the request times out and is denied (never for a question or a plan)." schema:"ref=Timestamp"`
}

// Question is one question of AskUserQuestion.
type Question struct {
	Question    string           `json:"question" schema:"minLength=1"`
	Header      string           `json:"header,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect,omitempty"`
}

// QuestionOption is one option of a Question.
type QuestionOption struct {
	Label       string `json:"label" schema:"minLength=1"`
	Description string `json:"description,omitempty"`
}

// MCPRef names the MCP server and tool behind a Claude tool name
// (mcp__<server>__<tool>).
type MCPRef struct {
	Server string `json:"server" schema:"minLength=1"`
	Tool   string `json:"tool" schema:"minLength=1"`
}

// PermissionResolved is the data of permission/resolved.
type PermissionResolved struct {
	Session   string `json:"session" schema:"ref=SessionId"`
	RequestID string `json:"requestId" schema:"minLength=1"`
	Behavior  string `json:"behavior" schema:"ref=ResolvedBehavior"`
	Reason    string `json:"reason,omitempty" schema:"ref=ResolvedReason"`
	Message   string `json:"message,omitempty"`
}

// MCPStatus is the data of mcp/status and the body of GET /v1/mcp/status.
type MCPStatus struct {
	Servers   []MCPServerStatus `json:"servers"`
	UpdatedAt time.Time         `json:"updatedAt,omitzero" schema:"ref=Timestamp"`
}

// MCPServerStatus is one server of the MCP status indicator.
type MCPServerStatus struct {
	Name       string         `json:"name" schema:"ref=ServerName"`
	Status     string         `json:"status" schema:"ref=McpStatusValue"`
	Scope      string         `json:"scope" schema:"ref=Scope"`
	Approval   string         `json:"approval" schema:"ref=Approval"`
	Error      string         `json:"error,omitempty" jsonschema:"Why the server failed, when known."`
	ErrorCode  string         `json:"errorCode,omitempty" schema:"ref=ProbeCode"`
	Tools      []string       `json:"tools,omitzero" jsonschema:"Tool names, when known." schema:"items.minLength=1"`
	ToolCount  *int64         `json:"toolCount,omitempty" schema:"minimum=0"`
	Transport  string         `json:"transport,omitempty" schema:"ref=Transport"`
	ServerInfo *MCPServerInfo `json:"serverInfo,omitempty"`
	Origin     string         `json:"origin,omitempty" jsonschema:"What the status comes from: config (not active, or never observed), session (a live session's report) or probe." schema:"ref=Origin"`
	ObservedAt time.Time      `json:"observedAt,omitzero" schema:"ref=Timestamp"`
}

// MCPConfig is the data of mcp/config: the resolved configuration, redacted
// (the shape of `ccproxy mcp config --json`).
type MCPConfig struct {
	Project      string            `json:"project,omitempty"`
	Servers      []MCPConfigServer `json:"servers"`
	Errors       []MCPConfigError  `json:"errors,omitzero"`
	AllowedTools []string          `json:"allowedTools,omitzero" schema:"items.minLength=1"`
	// Trusted: the project is a trusted workspace
	// (hasTrustDialogAccepted), so its settings files count.
	Trusted bool `json:"trusted,omitempty" jsonschema:"The project is a trusted workspace (hasTrustDialogAccepted), so its settings files count."`
}

// MCPConfigServer is one configured server, redacted.
type MCPConfigServer struct {
	Name       string          `json:"name" schema:"ref=ServerName"`
	Scope      string          `json:"scope" schema:"ref=Scope"`
	Source     string          `json:"source,omitempty" jsonschema:"The file it comes from."`
	Type       string          `json:"type" schema:"ref=Transport"`
	Active     bool            `json:"active"`
	Approval   string          `json:"approval" schema:"ref=Approval"`
	Shadows    []MCPShadow     `json:"shadows,omitzero"`
	MissingEnv []string        `json:"missingEnv,omitzero" schema:"items.minLength=1"`
	Config     json.RawMessage `json:"config,omitempty" jsonschema:"The server's definition with secrets masked." schema:"type=object"`
	// Reason says why an inactive server is inactive.
	Reason string `json:"reason,omitempty" jsonschema:"Why an inactive server is inactive."`
	// NeedsTrust: it awaits approval only because the workspace is not
	// trusted (a project settings file approves it); mcp/trust activates it.
	NeedsTrust bool `json:"needsTrust,omitempty" jsonschema:"It awaits approval only because the workspace is not trusted; mcp/trust activates it."`
}

// MCPShadow is a definition of the same name that a server overrides.
type MCPShadow struct {
	Scope  string `json:"scope" schema:"ref=Scope"`
	Source string `json:"source,omitempty"`
}

// MCPConfigError is a config problem: file, position and reason.
type MCPConfigError struct {
	File    string `json:"file" schema:"minLength=1"`
	Line    int64  `json:"line,omitempty" schema:"minimum=0"`
	Column  int64  `json:"column,omitempty" schema:"minimum=0"`
	Message string `json:"message" schema:"minLength=1"`
}

// Required lists are written as [] when nil, never as null.

func (h Hello) MarshalJSON() ([]byte, error) {
	type plain Hello
	h.Capabilities = orEmpty(h.Capabilities)
	return json.Marshal(plain(h))
}

func (r SessionListResult) MarshalJSON() ([]byte, error) {
	type plain SessionListResult
	r.Sessions = orEmpty(r.Sessions)
	return json.Marshal(plain(r))
}

func (r MCPProbeResult) MarshalJSON() ([]byte, error) {
	type plain MCPProbeResult
	r.Results = orEmpty(r.Results)
	return json.Marshal(plain(r))
}

func (r MCPToolsResult) MarshalJSON() ([]byte, error) {
	type plain MCPToolsResult
	r.Tools = orEmpty(r.Tools)
	return json.Marshal(plain(r))
}

func (t Tool) MarshalJSON() ([]byte, error) {
	type plain Tool
	t.Parameters = orEmpty(t.Parameters)
	return json.Marshal(plain(t))
}

func (r MCPLogResult) MarshalJSON() ([]byte, error) {
	type plain MCPLogResult
	r.Entries = orEmpty(r.Entries)
	return json.Marshal(plain(r))
}

func (s MCPStatus) MarshalJSON() ([]byte, error) {
	type plain MCPStatus
	s.Servers = orEmpty(s.Servers)
	return json.Marshal(plain(s))
}

func (c MCPConfig) MarshalJSON() ([]byte, error) {
	type plain MCPConfig
	c.Servers = orEmpty(c.Servers)
	return json.Marshal(plain(c))
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SessionCommands is the data of session/commands: the slash commands
// claude offers in a session, always the whole list. The proxy reads them
// from claude's answer to initialize (so they are known before the first
// turn) and from each system/commands_changed event.
type SessionCommands struct {
	Session  string         `json:"session" schema:"ref=SessionId"`
	Commands []SlashCommand `json:"commands" jsonschema:"Every slash command claude offers now (at most 512), in claude's order." schema:"maxItems=MaxCommands"`
}

// SlashCommand is one slash command claude offers: a built-in (compact,
// model), a skill, a project or user command (.claude/commands), or an MCP
// prompt.
type SlashCommand struct {
	Name         string   `json:"name" jsonschema:"What follows the / (text without control characters, 1 to 256 bytes; an MCP prompt's may hold spaces and parentheses)." schema:"minLength=1"`
	Description  string   `json:"description,omitempty" jsonschema:"What it does (cut at 1024 bytes)."`
	ArgumentHint string   `json:"argumentHint,omitempty" jsonschema:"What it takes after its name, e.g. [file] (cut at 256 bytes)."`
	Aliases      []string `json:"aliases,omitempty" jsonschema:"Other names it answers to (at most 8)."`
}

// Bounds of SessionCommands: claude's list is cut to MaxCommands entries,
// each text to its bound (in bytes, at a rune boundary); an entry whose
// name is empty, longer than MaxCommandNameBytes or holds control
// characters is left out.
const (
	MaxCommands                = 512
	MaxCommandNameBytes        = 256
	MaxCommandDescriptionBytes = 1024
	MaxCommandAliases          = 8
)

// SessionRewind is the data of session/rewind: the conversation continues
// from just before the user message To (its uuid, as live events and
// history/read carry it); with Files the files claude changed since then
// are restored first; DryRun only answers which files would change.
type SessionRewind struct {
	Session string `json:"session" schema:"ref=SessionId"`
	To      string `json:"to" jsonschema:"The uuid of a user message (a prompt, not a tool result) of the session's conversation." schema:"ref=MessageUuid"`
	Files   bool   `json:"files,omitempty" jsonschema:"Also restore the files claude changed since that message."`
	DryRun  bool   `json:"dryRun,omitempty" jsonschema:"Change nothing: answer the files a rewind with files would restore."`
}

// MaxRewindFiles bounds SessionRewindResult.Files.
const MaxRewindFiles = 1000

// SessionRewindResult is the data of the reply to session/rewind.
type SessionRewindResult struct {
	Files           []string `json:"files" jsonschema:"The files changed since the message (absolute paths, at most 1000): restored when files was set, would be with dryRun." schema:"maxItems=MaxRewindFiles"`
	Insertions      int64    `json:"insertions,omitempty" jsonschema:"Lines a dry run would add back." schema:"minimum=0"`
	Deletions       int64    `json:"deletions,omitempty" jsonschema:"Lines a dry run would remove." schema:"minimum=0"`
	FilesError      string   `json:"filesError,omitempty" jsonschema:"Why claude has no file checkpoint for the message (a dry run; a rewind with files fails instead)."`
	Rewound         bool     `json:"rewound" jsonschema:"The conversation was rewound (false for a dry run)."`
	ClaudeSessionID string   `json:"claudeSessionId,omitempty" jsonschema:"The Claude session the conversation continues in: the same one, or a new one when To was its first message." schema:"ref=ClaudeSessionId"`
}

// TokenUsage counts the tokens and the cost of one turn or of several.
type TokenUsage struct {
	InputTokens         int64   `json:"inputTokens" schema:"minimum=0"`
	OutputTokens        int64   `json:"outputTokens" schema:"minimum=0"`
	CacheReadTokens     int64   `json:"cacheReadTokens" jsonschema:"Input tokens read from the prompt cache." schema:"minimum=0"`
	CacheCreationTokens int64   `json:"cacheCreationTokens" jsonschema:"Input tokens written to the prompt cache." schema:"minimum=0"`
	CostUSD             float64 `json:"costUsd" jsonschema:"Cost in US dollars, as claude estimates it." schema:"minimum=0"`
}

// SessionUsage is session/state's usage: the turns of the session so far
// (every claude process it ran), the last turn, and how full the context
// window is when claude said so.
type SessionUsage struct {
	Total         TokenUsage  `json:"total" jsonschema:"All turns of this ccproxy session so far."`
	LastTurn      *TokenUsage `json:"lastTurn,omitempty" jsonschema:"The last turn that ended."`
	Turns         int64       `json:"turns" jsonschema:"Turns counted in total." schema:"minimum=0"`
	ContextTokens int64       `json:"contextTokens,omitempty" jsonschema:"Tokens the conversation takes in the context window now (claude's get_context_usage)." schema:"minimum=0"`
	ContextWindow int64       `json:"contextWindow,omitempty" jsonschema:"The model's context window in tokens." schema:"minimum=0"`
}

package protocol

import (
	"encoding/json"
	"time"
)

// Field conventions of the data structs below, relied on by the decoder:
//   - a field whose json tag has no omitempty/omitzero is required;
//   - only pointer fields may be null (and only when the SPEC says so);
//   - json.RawMessage fields hold client or CLI JSON that is never re-encoded.

// Data is implemented by every typed data struct. Validate checks what the
// JSON shape cannot (enumerations, patterns, ranges) and returns an *Error
// with code bad_request that names every invalid field.
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

// ReasonReaped is the reason of the session/state closed sent when the
// proxy forgets a session some time (its session TTL) after it exited.
const ReasonReaped = "reaped"

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
	Protocol     string    `json:"protocol"`
	Server       Software  `json:"server"`
	Claude       *Software `json:"claude,omitempty"`
	Capabilities []string  `json:"capabilities"`
	Limits       Limits    `json:"limits"`
	Connection   string    `json:"connection,omitempty"`
}

// Software names a program and its version.
type Software struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Limits are the bounds a connection lives within.
type Limits struct {
	MaxFrameBytes       int64 `json:"maxFrameBytes"`
	SendQueueFrames     int64 `json:"sendQueueFrames"`
	ReplayBytes         int64 `json:"replayBytes"`
	MaxSessions         int64 `json:"maxSessions,omitempty"`
	MaxImageBytes       int64 `json:"maxImageBytes,omitempty"`
	PermissionTimeoutMs int64 `json:"permissionTimeoutMs,omitempty"`
}

// ---------------------------------------------------------------- requests

// SessionCreate is the data of session/create.
type SessionCreate struct {
	Cwd            string `json:"cwd,omitempty"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permissionMode,omitempty"`
	Resume         string `json:"resume,omitempty"`
}

// SessionCreateResult is the data of the reply to session/create.
type SessionCreateResult struct {
	Session string `json:"session"`
	State   string `json:"state,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
}

// SessionSend is the data of session/send: one user turn.
type SessionSend struct {
	Session string  `json:"session"`
	Text    string  `json:"text"`
	Images  []Image `json:"images,omitzero"`
}

// Image is an image sent with a user turn, base64-encoded.
type Image struct {
	MediaType string `json:"mediaType"`
	Data      string `json:"data"`
}

// SessionSubscribe is the data of session/subscribe.
type SessionSubscribe struct {
	Session  string `json:"session"`
	AfterSeq *int64 `json:"afterSeq,omitempty"`
}

// SessionSubscribeResult is the data of the reply to session/subscribe.
type SessionSubscribeResult struct {
	Session  string `json:"session"`
	State    string `json:"state"`
	FirstSeq int64  `json:"firstSeq"`
	LastSeq  int64  `json:"lastSeq"`
}

// SessionUnsubscribe is the data of session/unsubscribe.
type SessionUnsubscribe struct {
	Session string `json:"session"`
}

// SessionInterrupt is the data of session/interrupt.
type SessionInterrupt struct {
	Session string `json:"session"`
}

// SessionClose is the data of session/close.
type SessionClose struct {
	Session string `json:"session"`
}

// SessionList is the (empty) data of session/list.
type SessionList struct{}

// SessionListResult is the data of the reply to session/list.
type SessionListResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo describes one session in session/list.
type SessionInfo struct {
	Session            string    `json:"session"`
	State              string    `json:"state"`
	Cwd                string    `json:"cwd"`
	Model              string    `json:"model,omitempty"`
	PermissionMode     string    `json:"permissionMode,omitempty"`
	ClaudeSessionID    string    `json:"claudeSessionId,omitempty"`
	CreatedAt          time.Time `json:"createdAt"`
	FirstSeq           int64     `json:"firstSeq"`
	LastSeq            int64     `json:"lastSeq"`
	Subscribers        int64     `json:"subscribers"`
	PendingPermissions int64     `json:"pendingPermissions"`
}

// PermissionRespond is the data of permission/respond. Always (with allow,
// for a tool) also allows the tool from now on: the rule is written to the
// project's .claude/settings.local.json. Answers (with allow, for a
// question) maps each question's text to the chosen option's label (labels
// joined with ", " for a multiSelect question) or to free text.
type PermissionRespond struct {
	Session      string            `json:"session"`
	RequestID    string            `json:"requestId"`
	Behavior     string            `json:"behavior"`
	UpdatedInput json.RawMessage   `json:"updatedInput,omitempty"`
	Message      string            `json:"message,omitempty"`
	Always       bool              `json:"always,omitempty"`
	Answers      map[string]string `json:"answers,omitempty"`
}

// SessionSetPermissionMode is the data of session/setPermissionMode.
type SessionSetPermissionMode struct {
	Session string `json:"session"`
	Mode    string `json:"mode"`
}

// SessionSetPermissionModeResult is the data of the reply to
// session/setPermissionMode: the mode now in force.
type SessionSetPermissionModeResult struct {
	Mode string `json:"mode"`
}

// MCPSubscribe is the (empty) data of mcp/subscribe.
type MCPSubscribe struct{}

// MCPUnsubscribe is the (empty) data of mcp/unsubscribe.
type MCPUnsubscribe struct{}

// MCPApprove is the data of mcp/approve.
type MCPApprove struct {
	Name string `json:"name"`
}

// MCPReject is the data of mcp/reject.
type MCPReject struct {
	Name string `json:"name"`
}

// MCPApprovalResult is the data of the reply to mcp/approve and mcp/reject.
type MCPApprovalResult struct {
	Name     string `json:"name"`
	Approval string `json:"approval"`
}

// MCPAdd is the data of mcp/add: write a server definition, as
// `claude mcp add-json` does, into a scope's file. Definition is the JSON
// object a configuration file holds under mcpServers.NAME.
type MCPAdd struct {
	Name       string          `json:"name"`
	Scope      string          `json:"scope,omitempty"` // MCPWriteScopes; default local
	Definition json.RawMessage `json:"definition"`
}

// MCPUpdate is the data of mcp/update: replace the definition of a server
// that exists in the scope.
type MCPUpdate struct {
	Name       string          `json:"name"`
	Scope      string          `json:"scope,omitempty"`
	Definition json.RawMessage `json:"definition"`
}

// MCPRemove is the data of mcp/remove; no scope: the one scope that has it.
type MCPRemove struct {
	Name  string `json:"name"`
	Scope string `json:"scope,omitempty"`
}

// MCPManageResult is the data of the reply to mcp/add, mcp/update and
// mcp/remove: where the change was written and the configuration resolved
// afterwards (what mcp/config now pushes).
type MCPManageResult struct {
	Name   string    `json:"name"`
	Scope  string    `json:"scope"`
	File   string    `json:"file"`
	Config MCPConfig `json:"config"`
}

// MCPTest is the data of mcp/test: probe a definition that is not saved.
// Its reply is an MCPProbeResult with one result.
type MCPTest struct {
	Name       string          `json:"name,omitempty"` // default "test"
	Definition json.RawMessage `json:"definition"`
}

// MCPToggle is the data of mcp/toggle: enable or disable a server in one
// live session or (no session) in every live session, through the CLI's
// mcp_toggle control request. Enabled is required. With Persist the
// choice is instead recorded where the CLI records disabled servers
// (projects["<dir>"].disabledMcpServers of ~/.claude.json) and reaches every
// live session through the configuration, like a file edit (Sessions is
// then empty; Session must not be set).
type MCPToggle struct {
	Name    string `json:"name"`
	Enabled *bool  `json:"enabled"`
	Session string `json:"session,omitempty"`
	Persist bool   `json:"persist,omitempty"`
}

// MCPReconnect is the data of mcp/reconnect: reconnect a server in one
// live session or in every live session (mcp_reconnect).
type MCPReconnect struct {
	Name    string `json:"name"`
	Session string `json:"session,omitempty"`
}

// MCPLiveResult is the data of the reply to mcp/toggle and mcp/reconnect:
// what each live session concerned answered.
type MCPLiveResult struct {
	Name     string           `json:"name"`
	Sessions []MCPLiveOutcome `json:"sessions"`
}

// MCPLiveOutcome is one session's answer: ok, or the error (cli_error
// with claude's message, timeout, session_exited).
type MCPLiveOutcome struct {
	Session string `json:"session"`
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
	Name     string `json:"name"`
	Redirect string `json:"redirect,omitempty"`
}

// MCPLoginResult is the data of the reply to mcp/login: the authorization
// URL the CLI printed. Open it in a browser on the machine where ccproxy
// runs: the authorization server redirects to the CLI's callback on a
// loopback port there. URL is empty only when the CLI finished without
// printing one (its mcp/login push then follows at once).
type MCPLoginResult struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// MCPLogout is the data of mcp/logout: clear the server's stored OAuth
// credentials with `claude mcp logout` (cancelling a login of it that is
// still running), then reconnect it in every live session.
type MCPLogout struct {
	Name string `json:"name"`
}

// MCPLogoutResult is the data of the reply to mcp/logout: the CLI's
// message and what each live session answered to the reconnect (an
// error "Server status: needs-auth" is the expected answer).
type MCPLogoutResult struct {
	Name     string           `json:"name"`
	Message  string           `json:"message,omitempty"`
	Sessions []MCPLiveOutcome `json:"sessions"`
}

// MCPLoginEvent is the data of the mcp/login push, sent to the client that
// asked: state url (the URL is known, as in the reply), then done (signed
// in; live sessions were reconnected) or failed (Error: cli_error with the
// CLI's message, timeout, or cancelled).
type MCPLoginEvent struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	URL     string `json:"url,omitempty"`
	Message string `json:"message,omitempty"`
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
	Name string `json:"name,omitempty"`
}

// MCPProbeResult is the data of the reply to mcp/probe.
type MCPProbeResult struct {
	Results []ProbeResult `json:"results"`
}

// ProbeResult is what probing one server found.
type ProbeResult struct {
	Name            string            `json:"name"`
	Scope           string            `json:"scope,omitempty"`
	Transport       string            `json:"transport,omitempty"`
	OK              bool              `json:"ok"`
	Status          string            `json:"status"`
	Error           *ProbeError       `json:"error,omitempty"`
	ServerInfo      *MCPServerInfo    `json:"serverInfo,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Capabilities    json.RawMessage   `json:"capabilities,omitempty"`
	Tools           []ToolSummary     `json:"tools,omitzero"`
	ToolCount       int64             `json:"toolCount"`
	Resources       []ResourceSummary `json:"resources,omitzero"`
	Prompts         []PromptSummary   `json:"prompts,omitzero"`
	LatencyMs       Latency           `json:"latencyMs"`
	ProbedAt        time.Time         `json:"probedAt,omitzero"`
}

// ProbeError is a typed probe failure; Code is one of the Probe* constants.
type ProbeError struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	StderrTail string `json:"stderrTail,omitempty"`
}

// MCPServerInfo is the serverInfo an MCP server returned from initialize.
type MCPServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Latency of each probe step, in milliseconds.
type Latency struct {
	Total      float64  `json:"total"`
	Connect    *float64 `json:"connect,omitempty"`
	Initialize *float64 `json:"initialize,omitempty"`
	Tools      *float64 `json:"tools,omitempty"`
	Resources  *float64 `json:"resources,omitempty"`
	Prompts    *float64 `json:"prompts,omitempty"`
}

// ToolSummary names a tool.
type ToolSummary struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// ResourceSummary names a resource.
type ResourceSummary struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MimeType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// PromptSummary names a prompt.
type PromptSummary struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// MCPTools is the data of mcp/tools.
type MCPTools struct {
	Name string `json:"name"`
}

// MCPToolsResult is the data of the reply to mcp/tools.
type MCPToolsResult struct {
	Server string `json:"server"`
	Tools  []Tool `json:"tools"`
}

// Tool is one tool of a server with its parameters.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Parameters   []Parameter     `json:"parameters"`
}

// Parameter is one node of the parameter tree built from a tool's inputSchema.
// Type is string, number, integer, boolean, object, array, null or any.
type Parameter struct {
	Name        string            `json:"name"`
	Path        string            `json:"path"`
	Type        string            `json:"type"`
	Description string            `json:"description,omitempty"`
	Required    bool              `json:"required"`
	Nullable    bool              `json:"nullable,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitzero"`
	Minimum     *float64          `json:"minimum,omitempty"`
	Maximum     *float64          `json:"maximum,omitempty"`
	MinLength   *int64            `json:"minLength,omitempty"`
	MaxLength   *int64            `json:"maxLength,omitempty"`
	Pattern     string            `json:"pattern,omitempty"`
	Format      string            `json:"format,omitempty"`
	Items       *Parameter        `json:"items,omitempty"`
	Properties  []Parameter       `json:"properties,omitzero"`
	AnyOf       []Parameter       `json:"anyOf,omitzero"`
	OneOf       []Parameter       `json:"oneOf,omitzero"`
	Unsupported string            `json:"unsupported,omitempty"`
}

// MCPCall is the data of mcp/call.
type MCPCall struct {
	Name      string          `json:"name"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// MCPCallResult is the data of the reply to mcp/call: the tool's result,
// normalized like session tool_results.
type MCPCallResult struct {
	Server            string          `json:"server"`
	Tool              string          `json:"tool"`
	IsError           bool            `json:"isError"`
	Content           string          `json:"content"`
	Attachments       []Attachment    `json:"attachments,omitzero"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	DurationMs        float64         `json:"durationMs"`
}

// Attachment is binary content taken out of a tool result by normalization
// (package stream). Data (base64, inline mode) or URL (/v1/blobs/<sha256>)
// says where its bytes are; Error says why neither is set.
type Attachment struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType,omitempty"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
	URI       string `json:"uri,omitempty"`
	URL       string `json:"url,omitempty"`
	Data      string `json:"data,omitempty"`
	Error     string `json:"error,omitempty"`
}

// MCPLog is the data of mcp/log.
type MCPLog struct {
	Server string `json:"server,omitempty"`
	Limit  *int64 `json:"limit,omitempty"`
}

// MCPLogResult is the data of the reply to mcp/log: oldest entry first.
type MCPLogResult struct {
	Entries []LogEntry `json:"entries"`
}

// LogEntry is one MCP tool call.
type LogEntry struct {
	Time        time.Time       `json:"time"`
	Kind        string          `json:"kind"`
	Session     string          `json:"session,omitempty"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	ToolUseID   string          `json:"toolUseId,omitempty"`
	IsError     bool            `json:"isError"`
	DurationMs  *float64        `json:"durationMs,omitempty"`
	ResultBytes int64           `json:"resultBytes"`
	Input       json.RawMessage `json:"input,omitempty"`
	Output      *string         `json:"output,omitempty"`
}

// Empty is the data of replies that carry nothing: {}.
type Empty struct{}

// ---------------------------------------------------------------- pushes

// SessionEvent is the data of session/event. Event is the normalized
// stream-json event exactly as package stream produced it.
type SessionEvent struct {
	Session string          `json:"session"`
	Seq     int64           `json:"seq"`
	Event   json.RawMessage `json:"event"`
}

// SessionState is the data of session/state.
type SessionState struct {
	Session         string `json:"session"`
	State           string `json:"state"`
	ClaudeSessionID string `json:"claudeSessionId,omitempty"`
	Reason          string `json:"reason,omitempty"`
	PermissionMode  string `json:"permissionMode,omitempty"`
}

// SessionExited is the data of session/exited. Code is null when the
// process was killed by a signal; Signal is null when it exited by itself.
type SessionExited struct {
	Session    string  `json:"session"`
	Code       *int64  `json:"code"`
	Signal     *string `json:"signal"`
	StderrTail string  `json:"stderrTail"`
	Reason     string  `json:"reason,omitempty"`
}

// SessionGap is the data of session/gap: events before FirstSeq are gone.
type SessionGap struct {
	Session  string `json:"session"`
	FirstSeq int64  `json:"firstSeq"`
}

// PermissionRequest is the data of permission/request. Kind says what is
// asked: a tool use (PermissionKindTool; empty means the same), the
// questions of AskUserQuestion (PermissionKindQuestion, Questions set), or
// the approval of a plan (PermissionKindPlan, Plan set when claude gave its
// text). Questions and plans have no Deadline: they wait for a person.
type PermissionRequest struct {
	Session     string          `json:"session"`
	RequestID   string          `json:"requestId"`
	Kind        string          `json:"kind,omitempty"`
	ToolName    string          `json:"toolName"`
	Input       json.RawMessage `json:"input"`
	MCP         *MCPRef         `json:"mcp,omitempty"`
	ToolUseID   string          `json:"toolUseId,omitempty"`
	DisplayName string          `json:"displayName,omitempty"`
	Suggestions json.RawMessage `json:"suggestions,omitempty"`
	Questions   []Question      `json:"questions,omitempty"`
	Plan        string          `json:"plan,omitempty"`
	Deadline    time.Time       `json:"deadline,omitzero"`
}

// Question is one question of AskUserQuestion.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect,omitempty"`
}

// QuestionOption is one option of a Question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// MCPRef names the MCP server and tool behind a Claude tool name
// (mcp__<server>__<tool>).
type MCPRef struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// PermissionResolved is the data of permission/resolved.
type PermissionResolved struct {
	Session   string `json:"session"`
	RequestID string `json:"requestId"`
	Behavior  string `json:"behavior"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// MCPStatus is the data of mcp/status and the body of GET /v1/mcp/status.
type MCPStatus struct {
	Servers   []MCPServerStatus `json:"servers"`
	UpdatedAt time.Time         `json:"updatedAt,omitzero"`
}

// MCPServerStatus is one server of the MCP status indicator.
type MCPServerStatus struct {
	Name       string         `json:"name"`
	Status     string         `json:"status"`
	Scope      string         `json:"scope"`
	Approval   string         `json:"approval"`
	Error      string         `json:"error,omitempty"`
	ErrorCode  string         `json:"errorCode,omitempty"`
	Tools      []string       `json:"tools,omitzero"`
	ToolCount  *int64         `json:"toolCount,omitempty"`
	Transport  string         `json:"transport,omitempty"`
	ServerInfo *MCPServerInfo `json:"serverInfo,omitempty"`
	Origin     string         `json:"origin,omitempty"`
	ObservedAt time.Time      `json:"observedAt,omitzero"`
}

// MCPConfig is the data of mcp/config: the resolved configuration, redacted
// (the shape of `ccproxy mcp config --json`).
type MCPConfig struct {
	Project      string            `json:"project,omitempty"`
	Servers      []MCPConfigServer `json:"servers"`
	Errors       []MCPConfigError  `json:"errors,omitzero"`
	AllowedTools []string          `json:"allowedTools,omitzero"`
}

// MCPConfigServer is one configured server, redacted.
type MCPConfigServer struct {
	Name       string          `json:"name"`
	Scope      string          `json:"scope"`
	Source     string          `json:"source,omitempty"`
	Type       string          `json:"type"`
	Active     bool            `json:"active"`
	Approval   string          `json:"approval"`
	Shadows    []MCPShadow     `json:"shadows,omitzero"`
	MissingEnv []string        `json:"missingEnv,omitzero"`
	Config     json.RawMessage `json:"config,omitempty"`
}

// MCPShadow is a definition of the same name that a server overrides.
type MCPShadow struct {
	Scope  string `json:"scope"`
	Source string `json:"source,omitempty"`
}

// MCPConfigError is a config problem: file, position and reason.
type MCPConfigError struct {
	File    string `json:"file"`
	Line    int64  `json:"line,omitempty"`
	Column  int64  `json:"column,omitempty"`
	Message string `json:"message"`
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
